import request from 'supertest';
import { seedContactBook } from '@mailrail/testing/campaign-fixtures';
import { startTestApi, type TestApi } from '../../apps/api/src/testing/api-harness';
import { startTestWorkerEnv, type TestWorkerEnv } from '../../apps/worker/src/testing/worker-harness';

// The editor's promise end to end: what POST /campaigns/{id}/preview shows for a contact is
// exactly what the worker sends that contact, and a test send reaches SES as an ordinary email.

let env: TestWorkerEnv;
let api: TestApi;
let auth: { Authorization: string };
beforeAll(async () => {
  env = await startTestWorkerEnv({ CAMPAIGN_SCAN_INTERVAL_MS: '300' });
  api = await startTestApi({}, { databaseUrl: env.config.DATABASE_URL, redisPrefix: env.config.REDIS_PREFIX });
  auth = { Authorization: `Bearer ${await api.newKey(env.teamId)}` };
  await env.start();
});
afterAll(async () => {
  await api?.close();
  await env?.close();
});

const DOMAIN = 'editor.test';
const call = (path: string, body: object) => request(api.app).post(`/api/v1/campaigns${path}`).set(auth).send(body);

it('the preview for a contact is the email the worker sends them; a test send reaches SES with "[Test] "', async () => {
  const book = await seedContactBook(env.deps.db, env.teamId, { subscribed: 4 }, { domain: DOMAIN, variables: ['Plan'] });
  const content = JSON.stringify({
    type: 'doc',
    content: [
      { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'News & notes' }] },
      {
        type: 'paragraph',
        content: [
          { type: 'text', text: 'Hi ' },
          { type: 'variable', attrs: { id: 'firstName', fallback: 'friend' } },
          { type: 'text', text: ' at ' },
          { type: 'variable', attrs: { id: 'Company', fallback: 'home' } },
          { type: 'text', text: ', plan ' },
          { type: 'variable', attrs: { id: 'Plan', fallback: 'free' } },
        ],
      },
      { type: 'button', attrs: { url: '{{usesend_unsubscribe_url}}', text: 'Unsubscribe' } },
    ],
  });
  const created = await call('', {
    name: 'Editor',
    from: `News <news@${env.domain.name}>`,
    subject: 'For {{firstName}} <{{email}}>',
    previewText: 'A peek',
    contactBookId: book.id,
    content,
  });
  expect(created.status).toBe(200);
  const id = created.body.id;
  const contactId = `${book.id}_s0000002`;

  const preview = await call(`/${id}/preview`, { contactId });
  expect(preview.status).toBe(200);
  expect(preview.body.subject).toBe('For First2 <s2@editor.test>');

  const test = await call(`/${id}/test`, { to: 'me@example.org', contactId });
  expect(test.status).toBe(200);
  await env.waitFor(async () => env.ses.messagesTo('me@example.org').length === 1, 20_000);
  expect(env.ses.messagesTo('me@example.org')[0].raw).toMatch(/^Subject: \[Test\] For First2/m);

  expect((await call(`/${id}/schedule`, {})).status).toBe(200);
  await env.waitFor(async () => (await env.deps.db.campaign.findUniqueOrThrow({ where: { id } })).status === 'SENT', 30_000);
  const sent = await env.deps.db.email.findFirstOrThrow({ where: { campaignId: id, contactId } });
  expect({ subject: sent.subject, html: sent.html, text: sent.text }).toEqual({
    subject: preview.body.subject,
    html: preview.body.html,
    text: preview.body.text,
  });
  expect(sent.html).toContain('Hi First2 at Co2, plan free');
  expect(env.ses.messagesTo(`s2@${DOMAIN}`)).toHaveLength(1);
});
