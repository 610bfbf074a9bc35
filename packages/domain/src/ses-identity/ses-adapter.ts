import {
  CreateEmailIdentityCommand,
  DeleteEmailIdentityCommand,
  GetEmailIdentityCommand,
  PutEmailIdentityMailFromAttributesCommand,
  SESv2Client,
} from '@aws-sdk/client-sesv2';
import { IdentityExistsError, IdentityServiceError, toIdentityStatusValue, type IdentityPort } from './port';

export interface SesIdentityOptions {
  /** SES_ENDPOINT: an SES-compatible endpoint instead of AWS. */
  endpoint?: string;
  /** Explicit credentials; by default the SDK's chain (env, profile, instance role) is used. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

// BYODKIM wants the bare base64 of the key, without the PEM armour lines.
export const pemToBase64 = (pem: string) => pem.replace(/-----(BEGIN|END)[^-]+-----/g, '').replace(/\s+/g, '');

function wrap(err: unknown): Error {
  const e = err as { name?: string; message?: string };
  if (e?.name === 'AlreadyExistsException') return err as Error;
  return new IdentityServiceError(`SES: ${e?.message ?? String(err)}`, e?.name ?? 'Error');
}

/** SES v2 identities, one client per region. */
export function createSesIdentityPort(opts: SesIdentityOptions = {}): IdentityPort {
  const clients = new Map<string, SESv2Client>();
  const client = (region: string) => {
    let c = clients.get(region);
    if (!c) {
      c = new SESv2Client({
        region,
        ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
        ...(opts.credentials ? { credentials: opts.credentials } : {}),
      });
      clients.set(region, c);
    }
    return c;
  };

  return {
    kind: 'ses',
    async createIdentity(input) {
      const ses = client(input.region);
      try {
        await ses.send(
          new CreateEmailIdentityCommand({
            EmailIdentity: input.domain,
            DkimSigningAttributes: {
              DomainSigningSelector: input.dkimSelector,
              DomainSigningPrivateKey: pemToBase64(input.dkimPrivateKey),
            },
          }),
        );
      } catch (err) {
        if ((err as { name?: string }).name === 'AlreadyExistsException') throw new IdentityExistsError(input.domain);
        throw wrap(err);
      }
      try {
        await ses.send(
          new PutEmailIdentityMailFromAttributesCommand({
            EmailIdentity: input.domain,
            MailFromDomain: input.mailFromDomain,
            BehaviorOnMxFailure: 'USE_DEFAULT_VALUE',
          }),
        );
      } catch (err) {
        // Half an identity is worse than none: the caller's transaction rolls back, so undo SES too.
        await ses.send(new DeleteEmailIdentityCommand({ EmailIdentity: input.domain })).catch(() => undefined);
        throw wrap(err);
      }
    },
    async getIdentityStatus(ref) {
      try {
        const r = await client(ref.region).send(new GetEmailIdentityCommand({ EmailIdentity: ref.domain }));
        return {
          verificationStatus: toIdentityStatusValue(r.VerificationStatus),
          dkimStatus: toIdentityStatusValue(r.DkimAttributes?.Status),
          mailFromStatus: toIdentityStatusValue(r.MailFromAttributes?.MailFromDomainStatus),
          ...(r.VerificationInfo?.ErrorType ? { errorType: r.VerificationInfo.ErrorType } : {}),
        };
      } catch (err) {
        if ((err as { name?: string }).name === 'NotFoundException') return null;
        throw wrap(err);
      }
    },
    async deleteIdentity(ref) {
      try {
        await client(ref.region).send(new DeleteEmailIdentityCommand({ EmailIdentity: ref.domain }));
      } catch (err) {
        if ((err as { name?: string }).name === 'NotFoundException') return;
        throw wrap(err);
      }
    },
  };
}
