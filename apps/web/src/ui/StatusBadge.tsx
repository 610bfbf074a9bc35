const TONE: Record<string, 'good' | 'bad' | 'warn' | 'info' | 'neutral'> = {
  DELIVERED: 'good',
  OPENED: 'good',
  CLICKED: 'good',
  SENT: 'info',
  QUEUED: 'neutral',
  SCHEDULED: 'neutral',
  DELIVERY_DELAYED: 'warn',
  BOUNCED: 'bad',
  REJECTED: 'bad',
  RENDERING_FAILURE: 'bad',
  COMPLAINED: 'bad',
  FAILED: 'bad',
  CANCELLED: 'neutral',
  SUPPRESSED: 'warn',
  SUCCESS: 'good',
  PENDING: 'warn',
  NOT_STARTED: 'neutral',
  TEMPORARY_FAILURE: 'warn',
  FAILURE: 'bad',
  ACTIVE: 'good',
  PAUSED: 'neutral',
  AUTO_DISABLED: 'bad',
  HARD_BOUNCE: 'bad',
  COMPLAINT: 'bad',
  MANUAL: 'neutral',
  ADMIN: 'info',
  MEMBER: 'neutral',
  FULL: 'info',
  SENDING: 'neutral',
};

/** A status word from the server, coloured by what it means; the word itself carries the meaning. */
export function StatusBadge({ status, label }: { status: string; label?: string }) {
  return <span className={`badge badge-${TONE[status] ?? 'neutral'}`}>{label ?? status.replaceAll('_', ' ').toLowerCase()}</span>;
}

/** A domain's status as a person says it: SUCCESS means the domain is verified. */
export function DomainStatusBadge({ status }: { status: string }) {
  return <StatusBadge status={status} label={status === 'SUCCESS' ? 'verified' : undefined} />;
}
