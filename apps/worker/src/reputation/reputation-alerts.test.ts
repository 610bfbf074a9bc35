import { simpleParser } from 'mailparser';
import { createTeam } from '@mailrail/domain/teams/api-keys';
import { useTestWorkerEnv } from '../testing/worker-harness';
import { evaluateReputationAlerts, type ReputationAlertDeps } from './reputation-alerts';

// The harness's own team (the first, id 1) is the system mail team: admins' alerts are real
// emails through the worker's system mailer, counted as rows of that team (the worker is not
// started, so each row still holds the message as composed).
const env = useTestWorkerEnv({
  DASHBOARD_MAIL_FROM: 'mailrail <alerts@example.com>',
  DASHBOARD_MAIL_TEAM_ID: '1',
  PUBLIC_URL: 'https://mail.test',
});

// The job reads the clock it is given: tests move it and write counters, never wait.
let now = new Date('2026-05-10T12:00:00Z');
const day = (offset: number) => new Date(now.getTime() + offset * 86_400_000).toISOString().slice(0, 10);

const deps = (): ReputationAlertDeps => ({
  db: env.deps.db,
  sql: env.deps.sql,
  clock: { now: () => now },
  log: env.deps.log,
  mailAdmins: env.deps.systemMail,
  minSent: env.config.REPUTATION_ALERT_MIN_SENT,
  publicUrl: env.config.PUBLIC_URL,
});

/** Sets one team's counters of a UTC day (replacing what that day had). */
async function counters(teamId: number, date: string, c: { sent: number; hardBounced?: number; complained?: number }) {
  await env.deps.db.dailyEmailUsage.upsert({
    where: { teamId_domainId_date_type: { teamId, domainId: 0, date, type: 'TRANSACTIONAL' } },
    create: { teamId, date, type: 'TRANSACTIONAL', ...c },
    update: c,
  });
}

const crossings = (teamId: number) =>
  env.deps.db.webhookEvent.findMany({ where: { teamId, type: 'reputation.threshold_crossed' }, orderBy: { createdAt: 'asc' } });

/** The alert emails written so far to `teamId`'s people, oldest first. */
const alertMail = (teamId: number) =>
  env.deps.db.email.findMany({
    where: {
      teamId: env.teamId,
      source: 'SYSTEM',
      to: { hasSome: [`admin-${teamId}@example.com`, `admin2-${teamId}@example.com`, `member-${teamId}@example.com`] },
    },
    orderBy: { createdAt: 'asc' },
    select: { to: true, subject: true, rawMessage: true },
  });

/** A team with two admins and a member. */
async function teamWithAdmins(name: string) {
  const team = await createTeam(env.deps.db, name);
  const people = [
    { email: `admin-${team.id}@example.com`, role: 'ADMIN' as const },
    { email: `admin2-${team.id}@example.com`, role: 'ADMIN' as const },
    { email: `member-${team.id}@example.com`, role: 'MEMBER' as const },
  ];
  for (const p of people) {
    const user = await env.deps.db.user.create({ data: { email: p.email } });
    await env.deps.db.membership.create({ data: { teamId: team.id, userId: user.id, role: p.role } });
  }
  return team;
}

// Each test starts in a month of its own, so the teams of the others have left the window.
let month = 4;
beforeEach(() => {
  now = new Date(Date.UTC(2026, month++, 10, 12));
});

it('a crossing mails each admin once and writes one event; staying above sends nothing more', async () => {
  const team = await teamWithAdmins('Crossing');
  await counters(team.id, day(0), { sent: 1000, hardBounced: 10 });
  await evaluateReputationAlerts(deps());
  expect(await crossings(team.id)).toHaveLength(0);
  expect(await alertMail(team.id)).toHaveLength(0);

  // 6 % hard bounces: past the review mark.
  await counters(team.id, day(0), { sent: 1000, hardBounced: 60 });
  expect(await evaluateReputationAlerts(deps())).toMatchObject({ alerts: 1 });
  const [first] = await crossings(team.id);
  expect(first.data).toMatchObject({ metric: 'bounceRate', level: 'review', previousLevel: 'healthy', rate: 6, threshold: 5 });
  const mail = await alertMail(team.id);
  expect(mail.map((m) => m.to).sort()).toEqual([[`admin-${team.id}@example.com`], [`admin2-${team.id}@example.com`]]);
  expect(mail[0].subject).toBe("mailrail: Crossing's bounce rate crossed SES's review mark");
  // What the admin reads: the rate, the mark, the window, and the link to the team's overview.
  const parsed = await simpleParser(Buffer.from(mail[0].rawMessage!));
  expect(parsed.text).toContain('over the last 7 days');
  expect(parsed.text).toContain(`(${day(-6)} to ${day(0)}, UTC), of 1000 emails sent`);
  expect(parsed.text).toContain('The bounce rate is 6.000 % (60 hard bounces), at or above 5 %');
  expect(parsed.text).toContain(`https://mail.test/teams/${team.id}`);
  expect(parsed.html).toContain(`href="https://mail.test/teams/${team.id}"`);

  // Staying above, on later runs and later days: nothing more.
  await evaluateReputationAlerts(deps());
  now = new Date(now.getTime() + 86_400_000);
  await counters(team.id, day(0), { sent: 100, hardBounced: 7 });
  await evaluateReputationAlerts(deps());
  expect(await crossings(team.id)).toHaveLength(1);
  expect(await alertMail(team.id)).toHaveLength(2);

  // Further up, past the pause mark: one more event and one more message per admin.
  await counters(team.id, day(0), { sent: 1000, hardBounced: 300 });
  await evaluateReputationAlerts(deps());
  expect((await crossings(team.id)).map((e) => (e.data as { level: string }).level)).toEqual(['review', 'pause']);
  expect((await alertMail(team.id)).map((m) => m.subject)).toEqual([
    "mailrail: Crossing's bounce rate crossed SES's review mark",
    "mailrail: Crossing's bounce rate crossed SES's review mark",
    "mailrail: Crossing's bounce rate crossed SES's pause mark",
    "mailrail: Crossing's bounce rate crossed SES's pause mark",
  ]);
});

it('recovery, then a new crossing, alerts again', async () => {
  const team = await teamWithAdmins('Recovering');
  await counters(team.id, day(0), { sent: 2000, complained: 4 });
  await evaluateReputationAlerts(deps());
  expect(await alertMail(team.id)).toHaveLength(2);

  // A week later the bad day left the window: healthy, stored, no alert.
  now = new Date(now.getTime() + 7 * 86_400_000);
  await counters(team.id, day(0), { sent: 2000, complained: 1 });
  await evaluateReputationAlerts(deps());
  expect(await crossings(team.id)).toHaveLength(1);
  expect(await env.deps.db.reputationAlertState.findUnique({ where: { teamId: team.id } })).toMatchObject({
    bounceLevel: 'HEALTHY',
    complaintLevel: 'HEALTHY',
  });
  expect(await alertMail(team.id)).toHaveLength(2);

  // Crossing again alerts again.
  await counters(team.id, day(0), { sent: 2000, complained: 3 });
  await evaluateReputationAlerts(deps());
  const all = await crossings(team.id);
  expect(all).toHaveLength(2);
  expect(all[1].data).toMatchObject({ metric: 'complaintRate', level: 'review', previousLevel: 'healthy', rate: 0.15, threshold: 0.1 });
  const mail = await alertMail(team.id);
  expect(mail).toHaveLength(4);
  expect(mail[3].subject).toBe("mailrail: Recovering's complaint rate crossed SES's review mark");
});

it('sends nothing while the window holds fewer than REPUTATION_ALERT_MIN_SENT emails', async () => {
  expect(env.config.REPUTATION_ALERT_MIN_SENT).toBe(1000);
  const team = await teamWithAdmins('Small');
  // 1 bounce of 2 emails, then 1 complaint of 999: rates far past the marks, volume too small.
  await counters(team.id, day(0), { sent: 2, hardBounced: 1 });
  await evaluateReputationAlerts(deps());
  await counters(team.id, day(0), { sent: 999, hardBounced: 1, complained: 1 });
  await evaluateReputationAlerts(deps());
  expect(await crossings(team.id)).toHaveLength(0);
  expect(await alertMail(team.id)).toHaveLength(0);

  // The thousandth email makes the window count: the 0.1 % complaint rate is at the review mark.
  await counters(team.id, day(0), { sent: 1000, hardBounced: 1, complained: 1 });
  await evaluateReputationAlerts(deps());
  expect((await crossings(team.id)).map((e) => e.data)).toEqual([expect.objectContaining({ metric: 'complaintRate', rate: 0.1 })]);
  expect(await alertMail(team.id)).toHaveLength(2);
});

it('judges each team on its own counters and alerts only its admins', async () => {
  const bad = await teamWithAdmins('Bad');
  const good = await teamWithAdmins('Good');
  await counters(bad.id, day(0), { sent: 1000, complained: 2 });
  await counters(good.id, day(0), { sent: 100_000, complained: 2 });
  await evaluateReputationAlerts(deps());
  expect(await crossings(bad.id)).toHaveLength(1);
  expect(await crossings(good.id)).toHaveLength(0);
  expect(await alertMail(bad.id)).toHaveLength(2);
  expect(await alertMail(good.id)).toHaveLength(0);
});

it('writes the webhook event without dashboard mail, and nothing for a team that sent nothing', async () => {
  const team = await teamWithAdmins('No mail');
  const idle = await teamWithAdmins('Idle');
  await counters(team.id, day(-6), { sent: 1000, hardBounced: 100 }); // the window's first day
  await counters(team.id, day(-7), { sent: 1, hardBounced: 1 }); // outside it
  await evaluateReputationAlerts({ ...deps(), mailAdmins: null });
  const [event] = await crossings(team.id);
  expect(event.data).toMatchObject({
    metric: 'bounceRate',
    rate: 10,
    level: 'pause',
    window: { days: 7, from: day(-6), to: day(0), sent: 1000 },
  });
  expect(await alertMail(team.id)).toHaveLength(0);
  expect(await crossings(idle.id)).toHaveLength(0);
});
