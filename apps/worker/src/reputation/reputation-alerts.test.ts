import { useTestDatabase } from '@mailrail/testing/databases';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { createLogger } from '@mailrail/platform/log/logger';
import { createTeam } from '@mailrail/domain/teams/api-keys';
import { evaluateReputationAlerts, type ReputationAlertDeps } from './reputation-alerts';

const database = useTestDatabase();

// The job reads the clock it is given: tests move it and write counters, never wait.
let now = new Date('2026-05-10T12:00:00Z');
const day = (offset: number) => new Date(now.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
let mailed: { to: string; subject: string; text: string }[] = [];

const deps = (): ReputationAlertDeps => ({
  db: database.db,
  sql: prismaExecutor(database.db),
  clock: { now: () => now },
  log: createLogger('silent', 'test'),
  mailAdmins: async (m) => void mailed.push(m),
});

/** Sets one team's counters of a UTC day (replacing what that day had). */
async function counters(teamId: number, date: string, c: { sent: number; hardBounced?: number; complained?: number }) {
  await database.db.dailyEmailUsage.upsert({
    where: { teamId_domainId_date_type: { teamId, domainId: 0, date, type: 'TRANSACTIONAL' } },
    create: { teamId, date, type: 'TRANSACTIONAL', ...c },
    update: c,
  });
}

const crossings = (teamId: number) =>
  database.db.webhookEvent.findMany({ where: { teamId, type: 'reputation.threshold_crossed' }, orderBy: { createdAt: 'asc' } });

async function teamWithAdmin(name: string) {
  const team = await createTeam(database.db, name);
  const admin = await database.db.user.create({ data: { email: `admin-${team.id}@example.com` } });
  const member = await database.db.user.create({ data: { email: `member-${team.id}@example.com` } });
  await database.db.membership.createMany({
    data: [
      { teamId: team.id, userId: admin.id, role: 'ADMIN' },
      { teamId: team.id, userId: member.id, role: 'MEMBER' },
    ],
  });
  return team;
}

// Each test starts in a month of its own, so the teams of the others have left the window.
let month = 4;
beforeEach(() => {
  now = new Date(Date.UTC(2026, month++, 10, 12));
  mailed = [];
});

it('alerts once per upward crossing: crossing, staying above, falling below, crossing again', async () => {
  const team = await teamWithAdmin('Crossing');
  await counters(team.id, day(0), { sent: 1000, hardBounced: 10 });
  await evaluateReputationAlerts(deps());
  expect(await crossings(team.id)).toHaveLength(0);

  // 6 % hard bounces: past the review mark.
  await counters(team.id, day(0), { sent: 1000, hardBounced: 60 });
  expect(await evaluateReputationAlerts(deps())).toMatchObject({ alerts: 1 });
  const [first] = await crossings(team.id);
  expect(first.data).toMatchObject({ metric: 'bounceRate', level: 'review', previousLevel: 'healthy', rate: 6, threshold: 5 });
  expect(mailed.map((m) => m.to)).toEqual([`admin-${team.id}@example.com`]);
  expect(mailed[0].text).toContain('6.000 %');

  // Staying above, on later runs and later days: no new alert.
  await evaluateReputationAlerts(deps());
  now = new Date(now.getTime() + 86_400_000);
  await counters(team.id, day(0), { sent: 100, hardBounced: 7 });
  await evaluateReputationAlerts(deps());
  expect(await crossings(team.id)).toHaveLength(1);
  expect(mailed).toHaveLength(1);

  // Further up, past the pause mark: one more.
  await counters(team.id, day(0), { sent: 1000, hardBounced: 300 });
  await evaluateReputationAlerts(deps());
  expect((await crossings(team.id)).map((e) => (e.data as { level: string }).level)).toEqual(['review', 'pause']);

  // A week later the bad days left the window: healthy, stored, no alert.
  now = new Date(now.getTime() + 7 * 86_400_000);
  await counters(team.id, day(0), { sent: 1000, hardBounced: 1 });
  await evaluateReputationAlerts(deps());
  expect(await crossings(team.id)).toHaveLength(2);
  expect(await database.db.reputationAlertState.findUnique({ where: { teamId: team.id } })).toMatchObject({
    bounceLevel: 'HEALTHY',
    complaintLevel: 'HEALTHY',
  });

  // Crossing again alerts again.
  await counters(team.id, day(0), { sent: 1000, hardBounced: 1, complained: 2 });
  await evaluateReputationAlerts(deps());
  const all = await crossings(team.id);
  expect(all).toHaveLength(3);
  expect(all[2].data).toMatchObject({ metric: 'complaintRate', level: 'review', rate: 0.2, threshold: 0.1 });
});

it('judges each team on its own counters and alerts only its admins', async () => {
  const bad = await teamWithAdmin('Bad');
  const good = await teamWithAdmin('Good');
  await counters(bad.id, day(0), { sent: 100, complained: 1 });
  await counters(good.id, day(0), { sent: 100_000, complained: 1 });
  await evaluateReputationAlerts(deps());
  expect(await crossings(bad.id)).toHaveLength(1);
  expect(await crossings(good.id)).toHaveLength(0);
  expect(mailed.map((m) => m.to)).toEqual([`admin-${bad.id}@example.com`]);
});

it('writes the webhook event without dashboard mail, and nothing for a team that sent nothing', async () => {
  const team = await teamWithAdmin('No mail');
  const idle = await teamWithAdmin('Idle');
  await counters(team.id, day(-6), { sent: 10, hardBounced: 1 }); // the window's first day
  await counters(team.id, day(-7), { sent: 1, hardBounced: 1 }); // outside it
  await evaluateReputationAlerts({ ...deps(), mailAdmins: null });
  const [event] = await crossings(team.id);
  expect(event.data).toMatchObject({
    metric: 'bounceRate',
    rate: 10,
    level: 'pause',
    window: { days: 7, from: day(-6), to: day(0), sent: 10 },
  });
  expect(mailed).toHaveLength(0);
  expect(await crossings(idle.id)).toHaveLength(0);
});
