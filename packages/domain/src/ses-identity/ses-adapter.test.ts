import { createPrivateKey } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateDkimKeyPair } from '../domains/dkim';
import { identityAdapterKind } from './choose-adapter';
import { IdentityExistsError, IdentityServiceError } from './port';
import { createSesIdentityPort } from './ses-adapter';

// SES itself cannot be reached from tests and the local SES emulator has no identity API, so a
// small HTTP server plays SES v2's REST-JSON identity endpoints and records what it received.
interface Received {
  method: string;
  path: string;
  body: Record<string, unknown> | null;
}

let server: http.Server;
let endpoint: string;
let received: Received[] = [];
let identities = new Map<string, Record<string, unknown>>();
let failMailFrom = false;

function reply(res: http.ServerResponse, status: number, body: unknown, errorType?: string) {
  res.writeHead(status, { 'content-type': 'application/json', ...(errorType ? { 'x-amzn-errortype': errorType } : {}) });
  res.end(JSON.stringify(body));
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const path = decodeURIComponent(req.url!.split('?')[0]);
      const body = raw ? JSON.parse(raw) : null;
      received.push({ method: req.method!, path, body });
      const m = /^\/v2\/email\/identities(?:\/([^/]+))?(\/mail-from)?$/.exec(path);
      if (!m) return reply(res, 404, { message: 'no route' }, 'NotFoundException');
      const [, id, mailFrom] = m;
      if (req.method === 'POST' && !id) {
        if (identities.has(body.EmailIdentity)) return reply(res, 400, { message: 'exists' }, 'AlreadyExistsException');
        identities.set(body.EmailIdentity, { VerificationStatus: 'PENDING', DkimAttributes: { Status: 'PENDING' } });
        return reply(res, 200, { IdentityType: 'DOMAIN', VerifiedForSendingStatus: false });
      }
      const identity = id ? identities.get(id) : undefined;
      if (!identity) return reply(res, 404, { message: 'Identity does not exist' }, 'NotFoundException');
      if (req.method === 'PUT' && mailFrom) {
        if (failMailFrom) return reply(res, 400, { message: 'Invalid MAIL FROM domain' }, 'BadRequestException');
        identity.MailFromAttributes = {
          MailFromDomain: body.MailFromDomain,
          MailFromDomainStatus: 'PENDING',
          BehaviorOnMxFailure: body.BehaviorOnMxFailure,
        };
        return reply(res, 200, {});
      }
      if (req.method === 'GET') return reply(res, 200, identity);
      if (req.method === 'DELETE') {
        identities.delete(id);
        return reply(res, 200, {});
      }
      reply(res, 404, { message: 'no route' }, 'NotFoundException');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  received = [];
  identities = new Map();
  failMailFrom = false;
});

const port = () => createSesIdentityPort({ endpoint, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
const input = (domain: string, pem: string) => ({
  domain,
  region: 'eu-west-1',
  dkimSelector: 'usesend',
  dkimPrivateKey: pem,
  mailFromDomain: `mail.${domain}`,
});

describe('SES v2 identity adapter', () => {
  it('creates a BYODKIM identity with the bare base64 private key, then sets MAIL FROM', async () => {
    const { privateKeyPem } = await generateDkimKeyPair();
    await port().createIdentity(input('example.com', privateKeyPem));
    expect(received.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /v2/email/identities',
      'PUT /v2/email/identities/example.com/mail-from',
    ]);
    const create = received[0].body as {
      EmailIdentity: string;
      DkimSigningAttributes: { DomainSigningSelector: string; DomainSigningPrivateKey: string };
    };
    expect(create.EmailIdentity).toBe('example.com');
    expect(create.DkimSigningAttributes.DomainSigningSelector).toBe('usesend');
    const sentKey = create.DkimSigningAttributes.DomainSigningPrivateKey;
    expect(sentKey).toMatch(/^[A-Za-z0-9+/]+=*$/);
    const sameKey = createPrivateKey({ key: Buffer.from(sentKey, 'base64'), format: 'der', type: 'pkcs8' });
    expect(sameKey.export({ type: 'pkcs8', format: 'pem' })).toBe(privateKeyPem);
    expect(received[1].body).toEqual({ MailFromDomain: 'mail.example.com', BehaviorOnMxFailure: 'USE_DEFAULT_VALUE' });
  });

  it('maps GetEmailIdentity to the port statuses, and a missing identity to null', async () => {
    identities.set('example.com', {
      VerificationStatus: 'FAILED',
      DkimAttributes: { Status: 'SUCCESS' },
      MailFromAttributes: {
        MailFromDomain: 'mail.example.com',
        MailFromDomainStatus: 'TEMPORARY_FAILURE',
        BehaviorOnMxFailure: 'USE_DEFAULT_VALUE',
      },
      VerificationInfo: { ErrorType: 'HOST_NOT_FOUND' },
    });
    expect(await port().getIdentityStatus({ domain: 'example.com', region: 'eu-west-1' })).toEqual({
      verificationStatus: 'FAILED',
      dkimStatus: 'SUCCESS',
      mailFromStatus: 'TEMPORARY_FAILURE',
      errorType: 'HOST_NOT_FOUND',
    });
    expect(await port().getIdentityStatus({ domain: 'missing.example.com', region: 'eu-west-1' })).toBeNull();
  });

  it('reports an existing identity as IdentityExistsError', async () => {
    identities.set('taken.example.com', {});
    await expect(port().createIdentity(input('taken.example.com', (await generateDkimKeyPair()).privateKeyPem))).rejects.toBeInstanceOf(
      IdentityExistsError,
    );
  });

  it('removes the new identity again when MAIL FROM is refused', async () => {
    failMailFrom = true;
    const err = await port()
      .createIdentity(input('half.example.com', (await generateDkimKeyPair()).privateKeyPem))
      .catch((e) => e);
    expect(err).toBeInstanceOf(IdentityServiceError);
    expect(err.sesErrorName).toBe('BadRequestException');
    expect(received.map((r) => r.method)).toEqual(['POST', 'PUT', 'DELETE']);
    expect(identities.has('half.example.com')).toBe(false);
  });

  it('deletes identities, and treats an identity already gone as deleted', async () => {
    identities.set('bye.example.com', {});
    await port().deleteIdentity({ domain: 'bye.example.com', region: 'eu-west-1' });
    expect(identities.has('bye.example.com')).toBe(false);
    await expect(port().deleteIdentity({ domain: 'bye.example.com', region: 'eu-west-1' })).resolves.toBeUndefined();
  });
});

describe('choosing the identity adapter', () => {
  const base = { SES_ENDPOINT: undefined, DNS_RESOLVER: undefined, DNS_TIMEOUT_MS: 3000 };
  it('honours an explicit choice', () => {
    expect(identityAdapterKind({ ...base, SES_IDENTITY_ADAPTER: 'ses', SES_ENDPOINT: 'http://127.0.0.1:8005' }, {})).toBe('ses');
    expect(identityAdapterKind({ ...base, SES_IDENTITY_ADAPTER: 'local' }, { AWS_ACCESS_KEY_ID: 'x' })).toBe('local');
  });
  it('auto: local with an SES endpoint or without credentials, else SES', () => {
    expect(
      identityAdapterKind({ ...base, SES_IDENTITY_ADAPTER: 'auto', SES_ENDPOINT: 'http://127.0.0.1:8005' }, { AWS_ACCESS_KEY_ID: 'x' }),
    ).toBe('local');
    expect(identityAdapterKind({ ...base, SES_IDENTITY_ADAPTER: 'auto' }, {})).toBe('local');
    expect(identityAdapterKind({ ...base, SES_IDENTITY_ADAPTER: 'auto' }, { AWS_ACCESS_KEY_ID: 'x' })).toBe('ses');
    expect(identityAdapterKind({ ...base, SES_IDENTITY_ADAPTER: 'auto' }, { AWS_PROFILE: 'prod' })).toBe('ses');
  });
});
