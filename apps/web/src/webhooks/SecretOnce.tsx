import { CopyButton } from '../ui/CopyButton';

/** A signing secret, shown only in the answer that created it. */
export function SecretOnce({ secret }: { secret: string }) {
  return (
    <div className="stack">
      <p className="notice notice-warn">
        Copy the signing secret now: this is the only time it is shown. Receivers use it to verify the X-UseSend-Signature header.
      </p>
      <div className="copy-cell secret">
        <code data-testid="webhook-secret">{secret}</code>
        <CopyButton value={secret} label="Copy the signing secret" />
      </div>
    </div>
  );
}
