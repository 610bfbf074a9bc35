import { waitFor } from '@mailrail/testing/wait-for';
import { startTestRelay, type TestRelay } from './testing/smtp-harness';

// One request log entry per message transaction: the answer that ended it, with the envelope and
// never the message.

let t: TestRelay;

beforeAll(async () => {
  t = await startTestRelay({ REQUEST_LOG_FLUSH_MS: '20', API_RATE_LIMIT: '0' });
});
afterAll(async () => {
  await t?.close();
});

const entries = (method: string) =>
  waitFor(
    async () => {
      const rows = await t.db.requestLog.findMany({ where: { teamId: t.team.teamId, source: 'smtp', method } });
      return rows.length > 0 && rows;
    },
    { timeoutMs: 10_000, intervalMs: 20, what: `an SMTP ${method} entry` },
  );

it('logs an accepted message under its key, with the envelope and the email id but not the message', async () => {
  const info = await t.transport().sendMail({ from: `a@${t.domain.name}`, to: 'ann@dest.org', subject: 'Secret plans', text: 'the body' });
  const emailId = /OK ([0-9a-z]+)$/.exec(info.response)![1];
  const [row] = await entries('DATA');
  const key = await t.db.apiKey.findFirstOrThrow({ where: { teamId: t.team.teamId } });
  expect(row).toMatchObject({ path: '/smtp/DATA', status: 250, errorCode: null, apiKeyId: key.id });
  expect(row.requestBody).toEqual({ from: `a@${t.domain.name}`, to: ['ann@dest.org'], emailId });
  expect(JSON.stringify(row.requestBody)).not.toContain('Secret plans');
});

it('logs a MAIL FROM refused with its reply code and text', async () => {
  const pending = await t.addDomain(t.team.teamId, 'pending.example.com', { verified: false });
  await expect(t.transport().sendMail({ from: `a@${pending.name}`, to: 'x@dest.org', text: 'x' })).rejects.toMatchObject({
    responseCode: 553,
  });
  const [row] = await entries('MAIL');
  expect(row).toMatchObject({ path: '/smtp/MAIL', status: 553, errorCode: 'sender-refused' });
  expect(row.errorMessage).toContain('is not verified');
});
