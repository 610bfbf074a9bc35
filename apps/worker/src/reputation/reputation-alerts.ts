import type { Db, ReputationLevel as StoredLevel } from '@mailrail/platform/db/client';
import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';
import type { Clock } from '@mailrail/platform/clock';
import type { Logger } from '@mailrail/platform/log/logger';
import {
  crossedUpward,
  reputationLevel,
  REPUTATION_WINDOW_DAYS,
  SES_THRESHOLDS,
  type ReputationLevel,
} from '@mailrail/domain/reputation/rates';
import { allTeamsReputationWindow, reputationWindowDays, type WindowedReputation } from '@mailrail/domain/reputation/reputation-window';
import { recordWebhookEvent } from '@mailrail/domain/webhooks/outbox';
import { linkMessage, type SystemMailer } from '@mailrail/domain/system-mail/system-mail';

// Alerts when a team's windowed bounce or complaint rate rises past SES's review or pause mark
// (docs/deliverability.md "Reputation alerts"): a `reputation.threshold_crossed` webhook event
// and a message to each of the team's admins through the system mailer. Once per crossing:
// ReputationAlertState keeps the level each rate was last seen at, updated in the transaction that
// writes the event. A window with fewer than `minSent` sent emails is judged healthy: one
// complaint among a few hundred emails is past SES's mark without saying anything yet.

export interface ReputationAlertDeps {
  db: Db;
  sql: SqlExecutor;
  clock: Clock;
  log: Logger;
  /** The system mailer (packages/domain/src/system-mail); null when the server has no dashboard mail. */
  mailAdmins: SystemMailer | null;
  /** REPUTATION_ALERT_MIN_SENT: no alert while the window holds fewer sent emails. */
  minSent: number;
  /** PUBLIC_URL: the dashboard's base, for the message's link to the team's overview. */
  publicUrl: string;
}

const METRICS = [
  { rate: 'bounceRate', column: 'bounceLevel', count: 'hardBounced', label: 'bounce rate' },
  { rate: 'complaintRate', column: 'complaintLevel', count: 'complained', label: 'complaint rate' },
] as const;

type Metric = (typeof METRICS)[number];

export interface ReputationCrossing {
  metric: Metric['rate'];
  level: ReputationLevel;
  previousLevel: ReputationLevel;
  rate: number;
  threshold: number;
}

const toStored = (l: ReputationLevel): StoredLevel => l.toUpperCase() as StoredLevel;
const fromStored = (l: StoredLevel): ReputationLevel => l.toLowerCase() as ReputationLevel;

const emptyWindow = (now: Date): WindowedReputation => ({
  days: REPUTATION_WINDOW_DAYS,
  ...reputationWindowDays(now),
  sent: 0,
  hardBounced: 0,
  complained: 0,
  bounceRate: 0,
  complaintRate: 0,
});

/** The level a rate is judged at: healthy while the window is below the minimum volume. */
const judgedLevel = (deps: Pick<ReputationAlertDeps, 'minSent'>, window: WindowedReputation, m: Metric): ReputationLevel =>
  window.sent < deps.minSent ? 'healthy' : reputationLevel(window[m.rate], SES_THRESHOLDS[m.rate]);

/** One run: every team above a mark now, or stored above one (its rate may have fallen). */
export async function evaluateReputationAlerts(deps: ReputationAlertDeps): Promise<{ teams: number; alerts: number }> {
  const now = deps.clock.now();
  const windows = await allTeamsReputationWindow(deps.sql, now);
  const stored = await deps.db.reputationAlertState.findMany({
    where: { OR: [{ bounceLevel: { not: 'HEALTHY' } }, { complaintLevel: { not: 'HEALTHY' } }] },
    select: { teamId: true },
  });
  const above = [...windows].filter(([, w]) => METRICS.some((m) => judgedLevel(deps, w, m) !== 'healthy'));
  const teamIds = new Set([...above.map(([teamId]) => teamId), ...stored.map((s) => s.teamId)]);
  let alerts = 0;
  for (const teamId of teamIds) {
    try {
      const crossings = await evaluateTeam(deps, teamId, windows.get(teamId) ?? emptyWindow(now), now);
      alerts += crossings.length;
      if (crossings.length > 0) await mailAdmins(deps, teamId, crossings, windows.get(teamId) ?? emptyWindow(now));
    } catch (err) {
      // One team's failure (deleted meanwhile, mail refused) must not hold back the others.
      deps.log.warn({ err, teamId }, 'reputation alert evaluation failed for this team');
    }
  }
  return { teams: teamIds.size, alerts };
}

/** Stores the levels seen now and writes one event per upward crossing, in one transaction. */
async function evaluateTeam(deps: ReputationAlertDeps, teamId: number, window: WindowedReputation, now: Date) {
  return deps.db.$transaction(async (tx) => {
    await tx.$executeRaw`INSERT INTO "ReputationAlertState" ("teamId", "updatedAt") VALUES (${teamId}, now()) ON CONFLICT DO NOTHING`;
    // Locked, so two overlapping runs (two replicas) cannot both alert the same crossing.
    const [state] = await tx.$queryRaw<{ bounceLevel: StoredLevel; complaintLevel: StoredLevel }[]>`
      SELECT "bounceLevel", "complaintLevel" FROM "ReputationAlertState" WHERE "teamId" = ${teamId} FOR UPDATE`;
    const crossings: ReputationCrossing[] = [];
    const levels = {} as Record<Metric['column'], StoredLevel>;
    for (const m of METRICS) {
      const previousLevel = fromStored(state[m.column]);
      const level = judgedLevel(deps, window, m);
      levels[m.column] = toStored(level);
      if (!crossedUpward(previousLevel, level) || level === 'healthy') continue;
      const crossing = { metric: m.rate, level, previousLevel, rate: window[m.rate], threshold: SES_THRESHOLDS[m.rate][level] };
      crossings.push(crossing);
      await recordWebhookEvent(tx, {
        teamId,
        type: 'reputation.threshold_crossed',
        data: { ...crossing, occurredAt: now.toISOString(), window: { ...window } },
      });
    }
    if (levels.bounceLevel !== state.bounceLevel || levels.complaintLevel !== state.complaintLevel)
      await tx.reputationAlertState.update({ where: { teamId }, data: levels });
    return crossings;
  });
}

/** One message per admin of the team; one admin's refused message does not hold back the others. */
async function mailAdmins(deps: ReputationAlertDeps, teamId: number, crossings: ReputationCrossing[], window: WindowedReputation) {
  if (!deps.mailAdmins) return;
  const team = await deps.db.team.findUnique({
    where: { id: teamId },
    select: { name: true, memberships: { where: { role: 'ADMIN' }, select: { user: { select: { email: true } } } } },
  });
  if (!team) return;
  const labelOf = (c: ReputationCrossing) => METRICS.find((m) => m.rate === c.metric)!.label;
  const lines = [
    `Team "${team.name}": over the last ${window.days} days (${window.from} to ${window.to}, UTC), of ${window.sent} emails sent:`,
    ...crossings.map((c) => {
      const what = c.level === 'pause' ? 'the mark at which SES may pause sending' : 'the mark at which SES reviews an account';
      const count = c.metric === 'bounceRate' ? `${window.hardBounced} hard bounces` : `${window.complained} complaints`;
      return `The ${labelOf(c)} is ${c.rate.toFixed(3)} % (${count}), at or above ${c.threshold} %, ${what}.`;
    }),
    'The bounces and complaints are in the email log; the addresses that bounced or complained are suppressed. ' +
      'You get this message once per crossing: again only after the rate falls below the mark and rises past it once more.',
  ];
  const subject = `mailrail: ${team.name}'s ${crossings.map(labelOf).join(' and ')} crossed SES's ${crossings.some((c) => c.level === 'pause') ? 'pause' : 'review'} mark`;
  const action = { label: 'Open the overview', url: `${deps.publicUrl}/teams/${teamId}` };
  for (const { user } of team.memberships) {
    try {
      await deps.mailAdmins(linkMessage(user.email, subject, lines, action));
    } catch (err) {
      deps.log.warn({ err, teamId }, 'reputation alert mail to an admin not sent');
    }
  }
}
