// The events mailrail itself records (source "mailrail") in the same store as the API's custom
// events (docs/custom-events.md#built-in-events). Their names are part of the API: automations and
// callers match them, so they never change.

export const builtinEventNames = [
  'contact.created',
  'contact.subscribed',
  'contact.unsubscribed',
  'email.delivered',
  'email.opened',
  'email.clicked',
  'email.bounced',
  'email.complained',
  'campaign.sent',
] as const;
export type BuiltinEventName = (typeof builtinEventNames)[number];

/**
 * Names an API caller may not use: the namespaces of the built-in events (so a later built-in
 * event never meets a caller's event of the same name) and `mailrail:`.
 */
export const reservedEventNamePrefixes = ['contact.', 'email.', 'campaign.', 'mailrail:'] as const;

export const isReservedEventName = (name: string): boolean => {
  const lower = name.toLowerCase();
  return reservedEventNamePrefixes.some((p) => lower.startsWith(p));
};

/** The SES event types that become a built-in event, and its name. */
export const sesBuiltinEvent: Readonly<Record<string, BuiltinEventName>> = {
  Delivery: 'email.delivered',
  Open: 'email.opened',
  Click: 'email.clicked',
  Bounce: 'email.bounced',
  Complaint: 'email.complained',
};
