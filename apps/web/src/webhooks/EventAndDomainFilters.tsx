import { webhookEventTypes } from '@mailrail/domain/webhooks/events';
import type { Domain, Webhook } from '../api/types';

/** Which events and domains a webhook receives; nothing ticked means all of them. */
export function EventAndDomainFilters({
  events,
  onEvents,
  domainIds,
  onDomainIds,
  domains,
}: {
  events: Webhook['events'];
  onEvents: (e: Webhook['events']) => void;
  domainIds: number[];
  onDomainIds: (d: number[]) => void;
  domains: Domain[];
}) {
  const toggle = <T,>(list: T[], v: T, on: boolean) => (on ? [...list, v] : list.filter((x) => x !== v));
  return (
    <>
      <fieldset className="checkbox-grid">
        <legend>Events (none ticked: every event, including ones added later)</legend>
        {webhookEventTypes.map((t) => (
          <label key={t}>
            <input type="checkbox" checked={events.includes(t)} onChange={(e) => onEvents(toggle(events, t, e.target.checked))} /> {t}
          </label>
        ))}
      </fieldset>
      {domains.length > 0 && (
        <fieldset className="checkbox-grid">
          <legend>Domains (none ticked: every domain)</legend>
          {domains.map((d) => (
            <label key={d.id}>
              <input
                type="checkbox"
                checked={domainIds.includes(d.id)}
                onChange={(e) => onDomainIds(toggle(domainIds, d.id, e.target.checked))}
              />{' '}
              {d.name}
            </label>
          ))}
        </fieldset>
      )}
    </>
  );
}
