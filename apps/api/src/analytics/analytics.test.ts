import request from 'supertest';
import { foldCounterDeltas, foldCounterDeltasOnce } from '@mailrail/domain/ses-events/counter-deltas';
import { processSesEventJob } from '@mailrail/domain/ses-events/process-ses-event';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';

let api: TestApi;
const TODAY = '2026-05-10';
beforeAll(async () => {
  api = await startTestApi();
  // Analytics reads the clock per request: pin "today" (UTC).
  api.deps.clock = { now: () => new Date(`${TODAY}T23:30:00Z`) };
});
afterAll(async () => {
  await api.close();
});

type Counts = {
  sent?: number;
  delivered?: number;
  opened?: number;
  clicked?: number;
  bounced?: number;
  hardBounced?: number;
  complained?: number;
};

async function usage(teamId: number, domainId: number, date: string, type: 'TRANSACTIONAL' | 'MARKETING', c: Counts) {
  await api.deps.db.dailyEmailUsage.create({ data: { teamId, domainId, date, type, ...c } });
}

async function setup() {
  const team = await api.newTeam();
  const d1 = await api.addDomain(team.teamId, `a${Math.random().toString(36).slice(2, 8)}.example.com`);
  const d2 = await api.addDomain(team.teamId, `b${Math.random().toString(36).slice(2, 8)}.example.com`);
  return { team, d1: d1.id, d2: d2.id };
}

const get = (team: TestTeam | { Authorization: string }, path: string) =>
  request(api.app)
    .get(`/api/v1/analytics/${path}`)
    .set('auth' in team ? team.auth : team);

describe('GET /api/v1/analytics/email-time-series', () => {
  it('returns days + 1 entries, oldest first, ending today, with zeros for empty days', async () => {
    const { team, d1, d2 } = await setup();
    await usage(team.teamId, d1, TODAY, 'TRANSACTIONAL', { sent: 5, delivered: 4, opened: 2, clicked: 1, bounced: 1, complained: 1 });
    await usage(team.teamId, d1, TODAY, 'MARKETING', { sent: 10, delivered: 9 });
    await usage(team.teamId, d2, '2026-05-03', 'TRANSACTIONAL', { sent: 3 }); // the first day of a 7-day window
    await usage(team.teamId, d2, '2026-05-02', 'TRANSACTIONAL', { sent: 100 }); // outside it
    await usage(team.teamId, 0, '2026-05-09', 'TRANSACTIONAL', { sent: 1 }); // emails without a domain

    const res = await get(team, 'email-time-series?days=7');
    expect(res.status).toBe(200);
    expect(res.body.result).toHaveLength(8);
    expect(res.body.result[0]).toEqual({ date: '2026-05-03', sent: 3, delivered: 0, opened: 0, clicked: 0, bounced: 0, complained: 0 });
    expect(res.body.result[1]).toEqual({ date: '2026-05-04', sent: 0, delivered: 0, opened: 0, clicked: 0, bounced: 0, complained: 0 });
    expect(res.body.result[6]).toMatchObject({ date: '2026-05-09', sent: 1 });
    expect(res.body.result[7]).toEqual({ date: TODAY, sent: 15, delivered: 13, opened: 2, clicked: 1, bounced: 1, complained: 1 });
    expect(res.body.totalCounts).toEqual({ sent: 19, delivered: 13, opened: 2, clicked: 1, bounced: 1, complained: 1 });

    const month = await get(team, 'email-time-series');
    expect(month.body.result).toHaveLength(31);
    expect(month.body.result[0].date).toBe('2026-04-10');
    expect(month.body.totalCounts.sent).toBe(119);

    const oneDomain = await get(team, `email-time-series?days=7&domainId=${d2}`);
    expect(oneDomain.body.totalCounts.sent).toBe(3);
  });

  it('refuses other day counts and malformed domain ids', async () => {
    const { team } = await setup();
    for (const q of ['days=14', 'days=abc', 'domainId=x', 'domainId=-1']) {
      const res = await get(team, `email-time-series?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('BAD_REQUEST');
    }
  });

  it("answers 404 for another team's domain or an unknown one", async () => {
    const mine = await setup();
    const theirs = await setup();
    await usage(theirs.team.teamId, theirs.d1, TODAY, 'TRANSACTIONAL', { sent: 7 });
    for (const path of [
      `email-time-series?domainId=${theirs.d1}`,
      'email-time-series?domainId=999999',
      `reputation-metrics?domainId=${theirs.d1}`,
    ]) {
      const res = await get(mine.team, path);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    expect((await get(mine.team, 'email-time-series')).body.totalCounts.sent).toBe(0);
  });

  it('forces a domain-bound key to its own domain', async () => {
    const { team, d1, d2 } = await setup();
    await usage(team.teamId, d1, TODAY, 'TRANSACTIONAL', { sent: 1 });
    await usage(team.teamId, d2, TODAY, 'TRANSACTIONAL', { sent: 2 });
    const key = await api.newKey(team.teamId, { domainId: d1 });
    const auth = { Authorization: `Bearer ${key}` };
    expect((await get(auth, 'email-time-series')).body.totalCounts.sent).toBe(1);
    expect((await get(auth, `email-time-series?domainId=${d2}`)).body.totalCounts.sent).toBe(1);
  });
});

describe('GET /api/v1/analytics/email-time-series?campaignId=', () => {
  let seq = 0;
  async function campaignWithEmails(teamId: number, domainId: number, events: { day: string; statuses: string[] }[]) {
    const id = `camp-${Date.now()}-${++seq}`;
    await api.deps.db.campaign.create({ data: { id, teamId, domainId, name: 'c', from: 'a@b.c', subject: 's' } });
    for (const [i, e] of events.entries()) {
      const emailId = `${id}-e${i}`;
      await api.deps.db.email.create({
        data: { id: emailId, teamId, domainId, from: 'a@b.c', to: ['x@y.z'], subject: 's', campaignId: id, isMarketing: true },
      });
      await api.deps.db.emailEvent.createMany({
        data: e.statuses.map((status, k) => ({ emailId, status: status as 'SENT', createdAt: new Date(`${e.day}T10:00:0${k}Z`) })),
      });
    }
    return id;
  }

  it("counts one campaign's emails once per status, on the day of the first such event", async () => {
    const { team, d1 } = await setup();
    await usage(team.teamId, d1, TODAY, 'MARKETING', { sent: 50 }); // other mail of the team: not this campaign's
    const id = await campaignWithEmails(team.teamId, d1, [
      { day: TODAY, statuses: ['QUEUED', 'SENT', 'DELIVERED', 'OPENED', 'OPENED', 'CLICKED'] },
      { day: TODAY, statuses: ['SENT', 'BOUNCED'] },
      { day: '2026-05-08', statuses: ['SENT', 'DELIVERED', 'COMPLAINED'] },
      { day: '2026-04-01', statuses: ['SENT'] }, // outside the window
    ]);
    await campaignWithEmails(team.teamId, d1, [{ day: TODAY, statuses: ['SENT'] }]); // another campaign

    const res = await get(team, `email-time-series?days=7&campaignId=${id}`);
    expect(res.status).toBe(200);
    expect(res.body.result).toHaveLength(8);
    expect(res.body.result[5]).toEqual({ date: '2026-05-08', sent: 1, delivered: 1, opened: 0, clicked: 0, bounced: 0, complained: 1 });
    expect(res.body.result[7]).toEqual({ date: TODAY, sent: 2, delivered: 1, opened: 1, clicked: 1, bounced: 1, complained: 0 });
    expect(res.body.totalCounts).toEqual({ sent: 3, delivered: 2, opened: 1, clicked: 1, bounced: 1, complained: 1 });
  });

  it("answers 404 for another team's campaign, an unknown one, or one outside a domain-bound key's domain", async () => {
    const mine = await setup();
    const theirs = await setup();
    const theirCampaign = await campaignWithEmails(theirs.team.teamId, theirs.d1, [{ day: TODAY, statuses: ['SENT'] }]);
    const myOtherDomain = await campaignWithEmails(mine.team.teamId, mine.d2, [{ day: TODAY, statuses: ['SENT'] }]);
    for (const path of [`email-time-series?campaignId=${theirCampaign}`, 'email-time-series?campaignId=nope']) {
      const res = await get(mine.team, path);
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'NOT_FOUND', message: 'Campaign not found' });
    }
    const bound = { Authorization: `Bearer ${await api.newKey(mine.team.teamId, { domainId: mine.d1 })}` };
    expect((await get(bound, `email-time-series?campaignId=${myOtherDomain}`)).status).toBe(404);
    expect((await get(mine.team, `email-time-series?campaignId=${myOtherDomain}`)).body.totalCounts.sent).toBe(1);
    // Combined with a domain filter: the campaign's emails from that domain only.
    expect((await get(mine.team, `email-time-series?campaignId=${myOtherDomain}&domainId=${mine.d1}`)).body.totalCounts.sent).toBe(0);
    expect((await get(mine.team, `email-time-series?campaignId=${'x'.repeat(129)}`)).status).toBe(400);
  });
});

describe('GET /api/v1/analytics/reputation-metrics', () => {
  it('sums the all-time totals and gives rates in percent of delivered', async () => {
    const { team, d1, d2 } = await setup();
    expect((await get(team, 'reputation-metrics')).body).toMatchObject({
      delivered: 0,
      hardBounced: 0,
      complained: 0,
      bounceRate: 0,
      complaintRate: 0,
    });
    await api.deps.db.cumulatedMetrics.createMany({
      data: [
        { teamId: team.teamId, domainId: d1, delivered: 150, hardBounced: 3, complained: 1 },
        { teamId: team.teamId, domainId: d2, delivered: 50, hardBounced: 1, complained: 0 },
      ],
    });
    expect((await get(team, 'reputation-metrics')).body).toMatchObject({
      delivered: 200,
      hardBounced: 4,
      complained: 1,
      bounceRate: 2,
      complaintRate: 0.5,
    });
    const one = await get(team, `reputation-metrics?domainId=${d2}`);
    expect(one.body).toMatchObject({ delivered: 50, hardBounced: 1, complained: 0, bounceRate: 2, complaintRate: 0 });
    const bound = await api.newKey(team.teamId, { domainId: d1 });
    expect((await get({ Authorization: `Bearer ${bound}` }, 'reputation-metrics')).body.delivered).toBe(150);
  });

  it('judges the last 7 UTC days of sent mail in `window`, apart from the all-time figures', async () => {
    const { team, d1, d2 } = await setup();
    const other = await setup();
    const empty = (await get(team, 'reputation-metrics')).body.window;
    expect(empty).toEqual({
      days: 7,
      from: '2026-05-04',
      to: TODAY,
      sent: 0,
      hardBounced: 0,
      complained: 0,
      bounceRate: 0,
      complaintRate: 0,
    });
    // One bad day long ago: all time it still weighs, in the window it is gone.
    await usage(team.teamId, d1, '2026-05-03', 'TRANSACTIONAL', { sent: 100, hardBounced: 50, complained: 5 });
    await usage(team.teamId, d1, '2026-05-04', 'TRANSACTIONAL', { sent: 150, hardBounced: 3, complained: 1 });
    await usage(team.teamId, d2, TODAY, 'MARKETING', { sent: 50, hardBounced: 1 });
    await api.deps.db.cumulatedMetrics.create({ data: { teamId: team.teamId, domainId: d1, delivered: 200, hardBounced: 54 } });
    // Another team's bad week counts for nobody else.
    await usage(other.team.teamId, other.d1, TODAY, 'TRANSACTIONAL', { sent: 10, hardBounced: 9, complained: 9 });

    const body = (await get(team, 'reputation-metrics')).body;
    expect(body.bounceRate).toBe(27); // all time: 54 of 200 delivered
    expect(body.window).toMatchObject({ sent: 200, hardBounced: 4, complained: 1, bounceRate: 2, complaintRate: 0.5 });
    expect((await get(team, `reputation-metrics?domainId=${d2}`)).body.window).toMatchObject({ sent: 50, hardBounced: 1, bounceRate: 2 });
    expect((await get(other.team, 'reputation-metrics')).body.window).toMatchObject({ sent: 10, hardBounced: 9, complained: 9 });
  });
});

describe('rates beside the counts', () => {
  it('gives totalRates with SES denominators, 0 where nothing was sent or delivered', async () => {
    const { team, d1 } = await setup();
    expect((await get(team, 'email-time-series?days=7')).body.totalRates).toEqual({
      deliveryRate: 0,
      openRate: 0,
      clickRate: 0,
      bounceRate: 0,
      complaintRate: 0,
    });
    await usage(team.teamId, d1, TODAY, 'TRANSACTIONAL', {
      sent: 200,
      delivered: 100,
      opened: 50,
      clicked: 10,
      bounced: 20,
      complained: 1,
    });
    expect((await get(team, 'email-time-series?days=7')).body.totalRates).toEqual({
      deliveryRate: 50,
      openRate: 50,
      clickRate: 10,
      bounceRate: 10,
      complaintRate: 0.5,
    });
  });
});

describe('counters written in batches (counter deltas not folded yet)', () => {
  /** One email of the team per status list, each status given to SES event processing. */
  async function sesEvents(teamId: number, domainId: number, campaignId: string | null, types: string[][]) {
    for (const [i, list] of types.entries()) {
      const id = `cnt-${Date.now()}-${i}-${Math.random().toString(36).slice(2, 6)}`;
      await api.deps.db.email.create({
        data: {
          id,
          teamId,
          domainId,
          from: 'a@b.c',
          to: ['x@y.z'],
          subject: 's',
          sesEmailId: `ses-${id}`,
          latestStatus: 'SENT',
          campaignId,
        },
      });
      for (const [k, eventType] of list.entries()) {
        const bounce = eventType === 'Bounce' ? { bounce: { bounceType: 'Permanent', bouncedRecipients: [] } } : {};
        const message = JSON.stringify({
          eventType,
          mail: { messageId: `ses-${id}`, timestamp: `${TODAY}T10:00:00.000Z`, headers: [] },
          ...bounce,
        });
        expect(await processSesEventJob({ db: api.deps.db }, { snsMessageId: `${id}-${k}`, topicArn: 'arn', message })).toBe('processed');
      }
    }
  }

  it('analytics, reputation and campaign counters add the pending deltas: the totals are exact before, during and after the fold', async () => {
    const { team, d1 } = await setup();
    const other = await setup();
    await usage(team.teamId, d1, TODAY, 'TRANSACTIONAL', { sent: 10, delivered: 10 }); // folded long ago
    const campaign = await api.deps.db.campaign.create({
      data: { id: `camp-cnt-${Date.now()}`, teamId: team.teamId, domainId: d1, name: 'c', from: 'a@b.c', subject: 's' },
    });
    await sesEvents(team.teamId, d1, null, [
      ['Send', 'Delivery', 'Open', 'Open'],
      ['Send', 'Delivery'],
      ['Send', 'Bounce'],
    ]);
    await sesEvents(team.teamId, d1, campaign.id, [['Delivery', 'Click'], ['Complaint']]);
    await sesEvents(other.team.teamId, other.d1, null, [['Delivery']]); // another team's: never in these figures

    const expected = { sent: 13, delivered: 13, opened: 1, clicked: 1, bounced: 1, complained: 1 };
    const figures = async () => ({
      series: (await get(team, 'email-time-series?days=7')).body.totalCounts,
      reputation: (await get(team, 'reputation-metrics')).body,
      campaign: (await request(api.app).get(`/api/v1/campaigns/${campaign.id}`).set(team.auth)).body,
    });
    const check = async () => {
      const f = await figures();
      expect(f.series).toEqual(expected);
      // CumulatedMetrics had nothing before: only the events' delivered, hard bounce and complaint.
      expect(f.reputation).toMatchObject({ delivered: 3, hardBounced: 1, complained: 1 });
      expect(f.campaign).toMatchObject({ delivered: 1, clicked: 1, complained: 1, opened: 0 });
    };

    // Nothing folded yet: every figure comes from the deltas.
    expect(await api.deps.db.emailCounterDelta.count({ where: { teamId: team.teamId } })).toBeGreaterThan(0);
    await check();
    // Part folded (the oldest 4 deltas of the database), then all: the same totals.
    await foldCounterDeltasOnce(prismaExecutor(api.deps.db), 4);
    await check();
    await foldCounterDeltas(prismaExecutor(api.deps.db), 1000);
    expect(await api.deps.db.emailCounterDelta.count({ where: { teamId: team.teamId } })).toBe(0);
    await check();
    const list = await request(api.app).get('/api/v1/campaigns').set(team.auth);
    expect(list.body.campaigns.find((c: { id: string }) => c.id === campaign.id)).toMatchObject({ delivered: 1 });
    expect((await get(other.team, 'email-time-series?days=7')).body.totalCounts.delivered).toBe(1);
  });

  it('the campaign list adds pending deltas too', async () => {
    const { team, d1 } = await setup();
    const campaign = await api.deps.db.campaign.create({
      data: { id: `camp-cnt-l-${Date.now()}`, teamId: team.teamId, domainId: d1, name: 'c', from: 'a@b.c', subject: 's' },
    });
    await sesEvents(team.teamId, d1, campaign.id, [['Delivery'], ['Delivery']]);
    const list = await request(api.app).get('/api/v1/campaigns').set(team.auth);
    expect(list.body.campaigns.find((c: { id: string }) => c.id === campaign.id)).toMatchObject({ delivered: 2 });
  });
});
