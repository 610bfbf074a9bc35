import type * as SesV2 from '@aws-sdk/client-sesv2';
import { loadOnFirstUse } from '@mailrail/platform/process/load-on-first-use';
import { IdentityExistsError, IdentityServiceError, toIdentityStatusValue, type IdentityPort } from './port';

export interface SesIdentityOptions {
  /** SES_ENDPOINT: an SES-compatible endpoint instead of AWS. */
  endpoint?: string;
  /** Explicit credentials; by default the SDK's chain (env, profile, instance role) is used. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

// BYODKIM wants the bare base64 of the key, without the PEM armour lines.
export const pemToBase64 = (pem: string) => pem.replace(/-----(BEGIN|END)[^-]+-----/g, '').replace(/\s+/g, '');

// The SDK (about 1 MB of source with its core) is loaded by the first identity call, not at start-up.
const sdk = loadOnFirstUse<typeof SesV2>('@aws-sdk/client-sesv2');

function wrap(err: unknown): Error {
  const e = err as { name?: string; message?: string };
  if (e?.name === 'AlreadyExistsException') return err as Error;
  return new IdentityServiceError(`SES: ${e?.message ?? String(err)}`, e?.name ?? 'Error');
}

/** SES v2 identities, one client per region. */
export function createSesIdentityPort(opts: SesIdentityOptions = {}): IdentityPort {
  const clients = new Map<string, SesV2.SESv2Client>();
  const client = (region: string) => {
    let c = clients.get(region);
    if (!c) {
      c = new (sdk().SESv2Client)({
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
          new (sdk().CreateEmailIdentityCommand)({
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
          new (sdk().PutEmailIdentityMailFromAttributesCommand)({
            EmailIdentity: input.domain,
            MailFromDomain: input.mailFromDomain,
            BehaviorOnMxFailure: 'USE_DEFAULT_VALUE',
          }),
        );
      } catch (err) {
        // Half an identity is worse than none: the caller's transaction rolls back, so undo SES too.
        await ses.send(new (sdk().DeleteEmailIdentityCommand)({ EmailIdentity: input.domain })).catch(() => undefined);
        throw wrap(err);
      }
    },
    async getIdentityStatus(ref) {
      try {
        const r = await client(ref.region).send(new (sdk().GetEmailIdentityCommand)({ EmailIdentity: ref.domain }));
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
        await client(ref.region).send(new (sdk().DeleteEmailIdentityCommand)({ EmailIdentity: ref.domain }));
      } catch (err) {
        if ((err as { name?: string }).name === 'NotFoundException') return;
        throw wrap(err);
      }
    },
  };
}
