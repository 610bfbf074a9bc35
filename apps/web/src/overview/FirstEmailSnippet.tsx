import { CopyButton } from '../ui/CopyButton';

/** A ready-to-copy curl for the public API of this installation (same origin as the dashboard). */
export function FirstEmailSnippet({ domain = 'your-domain.example' }: { domain?: string }) {
  const curl = [
    `curl -X POST ${window.location.origin}/api/v1/emails \\`,
    `  -H "Authorization: Bearer $MAILRAIL_API_KEY" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d '{"from":"hello@${domain}","to":"you@example.org","subject":"Hello from mailrail","text":"It works"}'`,
  ].join('\n');
  return (
    <div className="snippet">
      <pre tabIndex={0} aria-label="curl command to send a first email">
        <code>{curl}</code>
      </pre>
      <CopyButton value={curl} label="Copy the curl command" />
    </div>
  );
}
