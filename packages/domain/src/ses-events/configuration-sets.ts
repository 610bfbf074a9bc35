// Names and event lists of the SES configuration sets that carry delivery events; shared by
// `ses setup` (which creates them) and the send worker (which picks one per message).

/** SES event types, as the SESv2 API spells them (without importing the SDK here). */
export type SesEventType =
  'SEND' | 'DELIVERY' | 'BOUNCE' | 'COMPLAINT' | 'REJECT' | 'DELIVERY_DELAY' | 'RENDERING_FAILURE' | 'SUBSCRIPTION' | 'CLICK' | 'OPEN';

export type TrackingKind = 'general' | 'click' | 'open' | 'full';

const GENERAL_EVENTS: SesEventType[] = [
  'SEND',
  'DELIVERY',
  'BOUNCE',
  'COMPLAINT',
  'REJECT',
  'DELIVERY_DELAY',
  'RENDERING_FAILURE',
  'SUBSCRIPTION',
];

export const EVENTS_BY_KIND: Record<TrackingKind, SesEventType[]> = {
  general: GENERAL_EVENTS,
  click: [...GENERAL_EVENTS, 'CLICK'],
  open: [...GENERAL_EVENTS, 'OPEN'],
  full: [...GENERAL_EVENTS, 'CLICK', 'OPEN'],
};

/** The configuration set a message is sent with: `<prefix>-general|click|open|full` by the domain's tracking flags. */
export function configurationSetName(prefix: string, tracking: { clickTracking: boolean; openTracking: boolean }): string {
  const kind: TrackingKind =
    tracking.clickTracking && tracking.openTracking
      ? 'full'
      : tracking.clickTracking
        ? 'click'
        : tracking.openTracking
          ? 'open'
          : 'general';
  return `${prefix}-${kind}`;
}
