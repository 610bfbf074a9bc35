import { testServerUrl } from '@mailrail/testing/databases';
import { testRedisUrl } from '@mailrail/testing/redis';
import { startTcpProxyFor, type TcpProxy } from '@mailrail/testing/tcp-proxy';
import { waitFor } from '@mailrail/testing/wait-for';
import { startTestRelay, type TestRelay } from './testing/smtp-harness';

// PostgreSQL or Redis going away under an authenticated session: the client gets a 4xx it will
// retry, and nothing is stored; once the server is back the retry is accepted, stored once. The
// relay reaches both through TCP proxies this file cuts (the shared servers keep running).

let t: TestRelay;
let postgres: TcpProxy;
let redis: TcpProxy;

beforeAll(async () => {
  postgres = await startTcpProxyFor(testServerUrl);
  redis = await startTcpProxyFor(testRedisUrl());
  t = await startTestRelay({ API_RATE_LIMIT: '0' }, { route: { database: postgres.route, redis: redis.route } });
});
afterAll(async () => {
  await postgres.restore().catch(() => undefined);
  await redis.restore().catch(() => undefined);
  await t?.close();
  await postgres.close();
  await redis.close();
});

let seq = 0;
const attempt = (transport: ReturnType<TestRelay['transport']>, subject: string) =>
  transport
    .sendMail({
      from: 'hello@relay.example.com',
      to: 'ann@dest.org',
      subject,
      text: 'x',
      messageId: `<${subject.replace(/\s/g, '-')}@client.test>`,
    })
    .then(
      (info) => ({ ok: true as const, response: info.response }),
      (err: { responseCode?: number; response?: string }) => ({ ok: false as const, code: err.responseCode, response: err.response }),
    );
const stored = (subject: string) => t.db.email.count({ where: { subject } });

async function cutAndRestore(proxy: TcpProxy) {
  const transport = t.transport({ pool: true, maxConnections: 1 });
  // Warm: the session is authenticated, the key and the domain are cached.
  expect((await attempt(transport, `warm ${++seq}`)).ok).toBe(true);
  const subject = `during outage ${++seq}`;
  await proxy.cut();
  const during = await attempt(transport, subject);
  expect(during).toMatchObject({ ok: false, code: 451 });
  expect(during.response).toMatch(/^451 4\.3\.0 /);
  expect(await stored(subject)).toBe(0);
  await proxy.restore();
  // The client retries, as SMTP clients do after a 4xx; the first retry that gets through is stored, once.
  await waitFor(async () => (await attempt(transport, subject)).ok, {
    timeoutMs: 20_000,
    intervalMs: 200,
    what: 'a retry after the outage',
  });
  expect(await stored(subject)).toBe(1);
}

it('answers 451 4.3.0 while PostgreSQL is unreachable mid-session, stores nothing, and takes the retry once it is back', async () => {
  await cutAndRestore(postgres);
});

it('answers 451 4.3.0 while Redis is unreachable mid-session (the resubmit check needs it), stores nothing, and takes the retry', async () => {
  await cutAndRestore(redis);
});

it('answers AUTH with 454 4.7.0 while a key cannot be looked up', async () => {
  const key = await t.newKey(t.team.teamId);
  await postgres.cut();
  try {
    const result = await attempt(t.transport({ pass: key }), `auth outage ${++seq}`);
    expect(result).toMatchObject({ ok: false, code: 454 });
  } finally {
    await postgres.restore();
  }
});
