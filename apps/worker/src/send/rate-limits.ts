import { createBatcher } from '@mailrail/platform/batching/batcher';
import type { Config } from '@mailrail/platform/config/schema';
import type { Logger } from '@mailrail/platform/log/logger';
import type { SendLane } from '@mailrail/platform/queue/queues';
import type { Redis } from '@mailrail/platform/redis/client';
import { redisScript, runScript } from '@mailrail/platform/redis/script';
import type { SesSender } from './ses-sender';

// SES gives each account a sending rate per region, counted in recipients. One Redis-side limiter
// per region hands out send permits to every worker replica and both lanes (docs/worker.md, "Rate
// limits"). It is a GCRA: permits are spaced one interval (1 s / rate) apart on one shared
// timeline, so no second ever holds more than the rate. A caller books the next free slot and
// sleeps until it, as long as that slot is within the horizon; beyond it the request is refused
// with the time to come back, and the job waits in its queue (not in memory, not spinning).
//
// The split is work-conserving: either lane may take the whole rate. A transactional request that
// was refused, or had to queue behind campaign mail, marks the transactional lane as waiting for a
// short while; during that time a marketing request also has to respect its own timeline spaced by
// interval / SES_MARKETING_SHARE (and is refused until that timeline reaches the head of the shared
// one), which holds campaign mail to its share and leaves the rest to transactional mail.

export const DEFAULT_SES_RATE = 14;

/**
 * Messages per second per region: SES_RATE_LIMIT, else the account's SES quota, else 14. The quota
 * is read even when SES_RATE_LIMIT is set: an override above it is worth a warning, and the call
 * warms the region's SES client (its first request loads the credential chain, slow enough that
 * the first messages would otherwise reach SES in a bunch).
 */
export async function resolveRegionRates(
  config: Pick<Config, 'SES_RATE_LIMIT' | 'sesRegions'>,
  ses: SesSender,
  log: Logger,
): Promise<Map<string, number>> {
  const rates = new Map<string, number>();
  for (const region of config.sesRegions) {
    const quota = await ses.getMaxSendRate(region);
    if (config.SES_RATE_LIMIT > 0) {
      rates.set(region, config.SES_RATE_LIMIT);
      if (quota && config.SES_RATE_LIMIT > quota) {
        log.warn({ region, rate: config.SES_RATE_LIMIT, quota }, 'SES_RATE_LIMIT is above the SES account quota: SES will throttle');
      }
      continue;
    }
    rates.set(region, quota ?? DEFAULT_SES_RATE);
    log.info({ region, rate: quota ?? DEFAULT_SES_RATE, source: quota ? 'ses-account' : 'default' }, 'SES sending rate');
  }
  return rates;
}

// One hash per region. KEYS[1]: the hash. ARGV: interval (ms), marketing interval (ms; 0 = no cap,
// -1 = no marketing mail while transactional mail waits), horizon (ms), how long a waiting
// transactional request holds the cap (ms), now (ms; empty: Redis's clock, always so outside the
// tests, which move time themselves), then four per request: lane, permits, the longest wait
// granted (ms), and '1' to only look (book nothing). The requests are decided in order, each on
// the state the one before left, exactly as separate calls would be (the hash's three decimals
// included): the requests of one event-loop turn share one call (createSendRateLimiter). Returns
// Redis's now (a string of ms on Redis's clock), then three per request: {1, ms until the message
// may leave, when it may leave (a string)} or {0, ms after which to ask again, ''}. Time is Redis's
// own clock, so replicas with skewed clocks share one timeline.
// Transactional mail "waits" when a request is refused, or when its slot lies behind campaign
// mail booked ahead of it (queuing behind other transactional mail is just the rate). Every
// booking takes the head of one dense timeline; capped campaign mail is refused until its own
// timeline reaches that head, rather than booking a later slot and leaving a gap before it.
const PERMITS = redisScript(
  `
if redis.replicate_commands then redis.replicate_commands() end
local key = KEYS[1]
local interval = tonumber(ARGV[1])
local mInterval = tonumber(ARGV[2])
local horizon = tonumber(ARGV[3])
local backlogTtl = tonumber(ARGV[4])
local now = tonumber(ARGV[5])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local s = redis.call('HMGET', key, 'tat', 'mtat', 'txWaitUntil', 'last')
local tat = tonumber(s[1]) or 0
local mtat = tonumber(s[2]) or 0
local txWaitUntil = tonumber(s[3]) or 0
local last = s[4]
local booked, marked = false, false
local function fmt(x) return string.format('%.3f', x) end
local function stored(x) return tonumber(fmt(x)) end
local function markTxWaiting()
  txWaitUntil = stored(math.max(txWaitUntil, now + backlogTtl))
  marked = true
end
local function decide(lane, n, maxWait, peek)
  local slot = math.max(now, tat)
  if lane == 'marketing' and txWaitUntil > now and mInterval ~= 0 then
    if mInterval < 0 then return 0, math.max(1, math.ceil(txWaitUntil - now)), '' end
    -- Never book ahead of the head of the timeline: the slots in between would be lost to everyone.
    if mtat > slot then return 0, math.max(1, math.ceil(mtat - slot)), '' end
  end
  -- A message for n recipients leaves in the middle of its n permits: the burst it is at SES
  -- spills over the slots on either side by half.
  local sendAt = slot + math.floor((n - 1) / 2) * interval
  local wait = sendAt - now
  if wait > maxWait then
    if lane == 'transactional' then markTxWaiting() end
    return 0, math.max(1, math.ceil(wait - horizon / 2)), ''
  end
  if peek then return 1, math.max(0, math.ceil(wait)), fmt(sendAt) end
  if lane == 'transactional' and slot > now and last == 'marketing' then markTxWaiting() end
  tat = stored(slot + n * interval)
  if lane == 'marketing' and mInterval > 0 then mtat = stored(slot + n * mInterval) end
  last = lane
  booked = true
  return 1, math.max(0, math.ceil(wait)), fmt(sendAt)
end
local out = {fmt(now)}
for i = 6, #ARGV, 4 do
  local granted, ms, sendAt = decide(ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), ARGV[i + 3] == '1')
  out[#out + 1] = granted
  out[#out + 1] = ms
  out[#out + 1] = sendAt
end
if booked then redis.call('HSET', key, 'tat', fmt(tat), 'mtat', fmt(mtat), 'last', last) end
if marked then redis.call('HSET', key, 'txWaitUntil', fmt(txWaitUntil)) end
if booked or marked then redis.call('PEXPIRE', key, math.ceil(math.max(tat, txWaitUntil) - now) + 60000) end
return out
`,
  1,
);

/**
 * Granted: the message may leave at `slotAt` (this process's Date.now() scale), `delayMs` after
 * Redis answered; `queuedMs` is how far ahead of the booking its slot lay on Redis's clock (not
 * rounded): 0 when the timeline was free. Refused: ask again in `retryInMs`.
 */
export type SendPermit = { granted: true; delayMs: number; slotAt: number; queuedMs: number } | { granted: false; retryInMs: number };

export interface SendRateLimiter {
  /**
   * Books `permits` (recipients) on the region's timeline. Granted: the message may leave in
   * `delayMs` (sleep until then). Refused when that would be more than `maxWaitMs` (default: the
   * horizon) away: ask again in `retryInMs`. `peek` books nothing: would it be granted?
   */
  acquire(region: string, lane: SendLane, permits: number, opts?: { maxWaitMs?: number; peek?: boolean }): Promise<SendPermit>;
  /** How far ahead a permit may be booked; refused requests come back when half of it is free. */
  readonly horizonMs: number;
  /** Milliseconds between two permits of the region. */
  intervalMs(region: string): number;
}

export interface RateLimiterSettings {
  /** BullMQ's REDIS_PREFIX: tests and deployments sharing a Redis stay apart. */
  prefix: string;
  ratesByRegion: Map<string, number>;
  /** SES_MARKETING_SHARE: campaign mail's share while transactional mail waits. */
  marketingShare: number;
  /** Default: max(1 s, two intervals), at most `maxHorizonMs`. */
  horizonMs?: number;
  /** Keeps the sleep well inside the send lease. */
  maxHorizonMs?: number;
  /**
   * Tests only: the timeline's clock (ms) in place of Redis's, so a test moves time itself (the
   * spacing, the mark of waiting transactional mail running out) instead of sleeping through it.
   */
  redisNow?: () => number;
}

/** The limiter's Redis key for a region; the braces make it a cluster hash tag. */
export function rateLimiterKey(prefix: string, region: string): string {
  return `${prefix}:{ses-rate:${region}}`;
}

export function createSendRateLimiter(redis: Redis, settings: RateLimiterSettings): SendRateLimiter {
  const slowest = Math.min(...[...settings.ratesByRegion.values()].map((r) => Math.max(r, 0.001)));
  const horizonMs =
    settings.horizonMs ?? Math.min(settings.maxHorizonMs ?? Infinity, Math.max(1000, 2000 / (Number.isFinite(slowest) ? slowest : 1)));
  // A transactional request that waited keeps the cap on campaign mail for this long: longer than
  // the pause of its refused lane (about half the horizon), so a lane that keeps waiting keeps the
  // cap, and short, so campaign mail gets the whole rate back soon after.
  const backlogTtlMs = Math.max(1.5 * horizonMs, 1000);
  const share = settings.marketingShare;
  const clock = redisClockOffset();
  const intervalMs = (region: string) => 1000 / (settings.ratesByRegion.get(region) ?? 1);
  const decide = async (requests: PermitRequest[], region: string): Promise<SendPermit[]> => {
    const interval = intervalMs(region);
    const marketingInterval = share >= 1 ? 0 : share <= 0 ? -1 : interval / share;
    const now = settings.redisNow?.() ?? '';
    const args: (string | number)[] = [rateLimiterKey(settings.prefix, region), interval, marketingInterval, horizonMs, backlogTtlMs, now];
    for (const r of requests) args.push(r.lane, r.permits, r.maxWaitMs, r.peek ? '1' : '0');
    const askedAt = Date.now();
    const reply = (await runScript(redis, PERMITS, args)) as (string | number)[];
    const answeredAt = Date.now();
    const redisNow = Number(reply[0]);
    // The slot on this process's clock. Counted from the answer's arrival instead, a reply that
    // waited in a busy event loop (tens of ms on a loaded machine) would shift the slot by that
    // wait unnoticed, and late messages bunch up at SES with the next ones.
    const offset = clock.sample(askedAt, answeredAt, redisNow);
    return requests.map((_, i): SendPermit => {
      const [granted, ms, sendAt] = [Number(reply[1 + 3 * i]), Number(reply[2 + 3 * i]), Number(reply[3 + 3 * i])];
      if (granted !== 1) return { granted: false, retryInMs: ms };
      const queuedMs = Math.max(0, sendAt - redisNow) || 0;
      return { granted: true, delayMs: ms, slotAt: Number.isFinite(offset) ? sendAt + offset : answeredAt + ms, queuedMs };
    });
  };
  // The requests of one turn of the event loop, per region: one script call for all of them. A
  // busy worker starts several SES calls per turn, and a call each would cost this process and
  // Redis a round trip's CPU per request (docs/worker.md). The call leaves on the next tick, as
  // soon as the callback that asked is done (not at the end of the turn): a permit is booked when
  // its SES call is about to start. A failed call fails the requests of its region only.
  const bookings = createBatcher(decide, { schedule: 'tick', maxBatch: MAX_REQUESTS_PER_CALL, groupBy: (r) => r.region });
  return {
    horizonMs,
    intervalMs,
    acquire(region, lane, permits, opts = {}) {
      return bookings.submit({
        region,
        lane,
        permits: Math.max(1, Math.floor(permits)),
        maxWaitMs: opts.maxWaitMs ?? horizonMs,
        peek: !!opts.peek,
      });
    },
  };
}

/** A booking waiting for its turn's script call. */
interface PermitRequest {
  region: string;
  lane: SendLane;
  permits: number;
  maxWaitMs: number;
  peek: boolean;
}

/** Requests per script call: a bound on its arguments and on the time Redis spends in one script. */
const MAX_REQUESTS_PER_CALL = 256;

/**
 * This process's clock minus Redis's, estimated as NTP does: from the round trip that took least
 * time (Redis read its clock somewhere inside it, so the middle is off by at most half of it). The
 * best sample of the current and of the previous window is used, so a clock that drifts or steps
 * is followed within two windows, and the estimate never rests on one slow round trip: replacing
 * the best sample by whatever came next once it was a minute old put a sample of a loaded moment
 * (a round trip of tens of ms) in charge, and the slots of that replica shifted by half of it.
 */
export function redisClockOffset(windowMs = 30_000) {
  type Sample = { roundTripMs: number; offsetMs: number };
  const none: Sample = { roundTripMs: Infinity, offsetMs: NaN };
  let windowStart = -Infinity;
  let current = none;
  let previous = none;
  return {
    sample(askedAt: number, answeredAt: number, redisNow: number): number {
      if (answeredAt - windowStart >= windowMs) {
        // A window passed without a sample: the one before it is too old to keep.
        previous = answeredAt - windowStart >= 2 * windowMs ? none : current;
        current = none;
        windowStart = answeredAt;
      }
      const roundTripMs = answeredAt - askedAt;
      if (Number.isFinite(redisNow) && roundTripMs <= current.roundTripMs) {
        current = { roundTripMs, offsetMs: (askedAt + answeredAt) / 2 - redisNow };
      }
      return (current.roundTripMs <= previous.roundTripMs ? current : previous).offsetMs;
    },
  };
}

/** SES counts its rate in recipients: To, Cc and Bcc of the envelope. */
export function recipientCount(destination: { to: string[]; cc: string[]; bcc: string[] }): number {
  return Math.max(1, destination.to.length + destination.cc.length + destination.bcc.length);
}
