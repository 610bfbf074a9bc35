import { startTestApi, type TestApi } from '../testing/api-harness';
import { createTeamDomains } from '@mailrail/domain/emails/team-domains';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

it('keeps a verified domain for five seconds on the injected clock, then reads it again', async () => {
  const now = Date.now();
  const clock = { now: () => new Date(now) };
  const domains = createTeamDomains(api.deps.db, clock);
  const d = await api.addDomain(api.team.teamId, 'cached.example.com');
  expect(await domains.find(api.team.teamId, 'cached.example.com')).toMatchObject({ id: d.id, status: 'SUCCESS' });
  await api.deps.db.domain.delete({ where: { id: d.id } });
  clock.now = () => new Date(now + 4_900);
  expect(await domains.find(api.team.teamId, 'cached.example.com')).toMatchObject({ id: d.id });
  clock.now = () => new Date(now + 5_001);
  expect(await domains.find(api.team.teamId, 'cached.example.com')).toBeNull();
});
