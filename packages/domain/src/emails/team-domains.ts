import type { Clock } from '@mailrail/platform/clock';
import type { Db } from '@mailrail/platform/db/client';

export interface TeamDomain {
  id: number;
  name: string;
  status: string;
  region: string;
}

const TTL_MS = 5_000;

/**
 * A team's domains, kept for a few seconds: every send needs them and they rarely change. Only
 * a hit on a verified domain is trusted from the cache; anything else is read again, so a newly
 * added or verified domain works at once (an unverified or deleted one may pass for TTL_MS).
 */
export function createTeamDomains(db: Db, clock: Clock) {
  const cache = new Map<number, { at: number; byName: Map<string, TeamDomain> }>();

  async function load(teamId: number) {
    const rows = await db.domain.findMany({ where: { teamId }, select: { id: true, name: true, status: true, region: true } });
    const entry = { at: clock.now().getTime(), byName: new Map(rows.map((d) => [d.name.toLowerCase(), d])) };
    cache.set(teamId, entry);
    return entry;
  }

  return {
    async find(teamId: number, name: string): Promise<TeamDomain | null> {
      let entry = cache.get(teamId);
      const hit = entry && entry.at + TTL_MS > clock.now().getTime() ? entry.byName.get(name) : undefined;
      if (hit?.status === 'SUCCESS') return hit;
      entry = await load(teamId);
      return entry.byName.get(name) ?? null;
    },
    forget(teamId: number) {
      cache.delete(teamId);
    },
  };
}

export type TeamDomains = ReturnType<typeof createTeamDomains>;
