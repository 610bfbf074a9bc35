import type { EventItem } from '../api/types';

/** One line about an event's properties for the list: the link of a click, a bounce's type, else the keys. */
export function eventSummary(e: EventItem): string {
  const p = e.properties;
  if (typeof p.link === 'string') return p.link;
  if (typeof p.bounceType === 'string') return [p.bounceType, p.bounceSubType].filter((v) => typeof v === 'string').join(' / ');
  if (typeof p.reason === 'string') return String(p.reason);
  const keys = Object.keys(p).filter((k) => k !== 'emailId' && k !== 'campaignId' && k !== 'email');
  return keys.length ? keys.map((k) => `${k}: ${JSON.stringify(p[k])}`).join(', ') : '';
}
