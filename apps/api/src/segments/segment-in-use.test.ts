import request from 'supertest';
import { insertScheduledCampaign } from '@mailrail/testing/campaign-fixtures';
import { startTestApi, type TestApi } from '../testing/api-harness';

// A campaign fixes its recipients from its segment's filter when it starts; the filter checked when
// it was scheduled must be the one it is prepared with (a filter made costly after scheduling
// stalled the campaign engine, docs/security.md). So a new filter is refused while a campaign about
// to start from it uses the segment; a rename is not.

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

const PROS = { match: 'all', conditions: [{ field: 'properties.plan', operator: 'equals', value: 'pro' }] };
const FREE = { match: 'all', conditions: [{ field: 'properties.plan', operator: 'equals', value: 'free' }] };

it('refuses (409) a new filter for a segment a SCHEDULED or RUNNING campaign has yet to prepare from; renames pass; pausing frees it', async () => {
  const book = (await request(api.app).post('/api/v1/contactBooks').set(api.team.auth).send({ name: 'In use' }).expect(200)).body.id;
  const segments = `/api/v1/contactBooks/${book}/segments`;
  const segmentId = (await request(api.app).post(segments).set(api.team.auth).send({ name: 'Pros', filter: PROS }).expect(200)).body.id;
  const domain = await api.addDomain(api.team.teamId, 'segment-in-use.test');
  const campaignId = await insertScheduledCampaign(api.deps.db, {
    teamId: api.team.teamId,
    domainId: domain.id,
    contactBookId: book,
    from: `news@${domain.name}`,
    scheduledAt: new Date(Date.now() + 3_600_000),
  });
  await api.deps.db.campaign.update({ where: { id: campaignId }, data: { segmentId } });
  const patch = (body: object) => request(api.app).patch(`${segments}/${segmentId}`).set(api.team.auth).send(body);
  const stored = async () => (await api.deps.db.segment.findUniqueOrThrow({ where: { id: segmentId } })).filter;

  for (const status of ['SCHEDULED', 'RUNNING'] as const) {
    await api.deps.db.campaign.update({ where: { id: campaignId }, data: { status } });
    const refused = await patch({ filter: FREE });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ error: { code: 'NOT_UNIQUE', message: expect.stringContaining(campaignId) } });
    expect(await stored()).toEqual(PROS);
  }
  // A rename, or the same filter sent again with it (an editor saving the whole form), is no change to the audience.
  expect((await patch({ name: 'Pro plan', filter: PROS }).expect(200)).body).toMatchObject({ name: 'Pro plan', filter: PROS });

  // Paused before its start, the campaign prepares from whatever the filter is when it resumes.
  await api.deps.db.campaign.update({ where: { id: campaignId }, data: { status: 'PAUSED' } });
  expect((await patch({ filter: FREE }).expect(200)).body.filter).toEqual(FREE);
  // Recipients fixed: the segment no longer decides anything for it.
  await api.deps.db.campaign.update({ where: { id: campaignId }, data: { status: 'RUNNING', recipientsReadyAt: new Date() } });
  expect((await patch({ filter: PROS }).expect(200)).body.filter).toEqual(PROS);
});

it("another team's segment stays a 404 to the PATCH", async () => {
  const other = await api.newTeam('Other');
  const book = (await request(api.app).post('/api/v1/contactBooks').set(api.team.auth).send({ name: 'Mine' }).expect(200)).body.id;
  const segmentId = (
    await request(api.app).post(`/api/v1/contactBooks/${book}/segments`).set(api.team.auth).send({ name: 'Pros', filter: PROS }).expect(200)
  ).body.id;
  await request(api.app).patch(`/api/v1/contactBooks/${book}/segments/${segmentId}`).set(other.auth).send({ filter: FREE }).expect(404);
});
