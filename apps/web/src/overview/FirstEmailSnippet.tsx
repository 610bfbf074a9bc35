import { Tabs } from 'radix-ui';
import type { SmtpSettings } from '../api/types';
import { useTeamQuery } from '../api/team-query';
import { CopyButton } from '../ui/CopyButton';

// The first email in the four ways people send: curl, the useSend SDK (mailrail speaks its wire
// format), Python and SMTP. With the key just created it is filled in; otherwise a variable.

interface SnippetInput {
  origin: string;
  key: string;
  from: string;
}

const curlSnippet = ({ origin, key, from }: SnippetInput) =>
  [
    `curl -X POST ${origin}/api/v1/emails \\`,
    `  -H "Authorization: Bearer ${key}" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d '{"from":"${from}","to":"you@example.org","subject":"Hello from mailrail","text":"It works"}'`,
  ].join('\n');

const jsSnippet = ({ origin, key, from }: SnippetInput) =>
  [
    `// npm install usesend-js`,
    `import { UseSend } from 'usesend-js';`,
    ``,
    `const mailrail = new UseSend(${key.startsWith('$') ? 'process.env.MAILRAIL_API_KEY' : `'${key}'`}, '${origin}');`,
    `const { data, error } = await mailrail.emails.send({`,
    `  from: '${from}',`,
    `  to: 'you@example.org',`,
    `  subject: 'Hello from mailrail',`,
    `  text: 'It works',`,
    `});`,
  ].join('\n');

const pythonSnippet = ({ origin, key, from }: SnippetInput) =>
  [
    `# pip install requests`,
    ...(key.startsWith('$') ? [`import os`] : []),
    `import requests`,
    ``,
    `response = requests.post(`,
    `    "${origin}/api/v1/emails",`,
    `    headers={"Authorization": ${key.startsWith('$') ? `"Bearer " + os.environ["MAILRAIL_API_KEY"]` : `"Bearer ${key}"`}},`,
    `    json={"from": "${from}", "to": "you@example.org", "subject": "Hello from mailrail", "text": "It works"},`,
    `)`,
    `print(response.json())  # {"emailId": "..."}`,
  ].join('\n');

const smtpSnippet = ({ key, from }: SnippetInput, smtp: SmtpSettings | undefined) => {
  const port = smtp?.ports[0];
  const server = `${smtp?.host ?? 'smtp.example.com'}:${port?.port ?? 2587}`;
  return [
    `# host ${smtp?.host ?? '…'}, port ${smtp?.ports.map((p) => `${p.port} (${p.security})`).join(' or ') || '…'}`,
    `# username ${smtp?.username ?? 'mailrail'}, password the API key`,
    `swaks --server ${server} ${port?.security === 'TLS' ? '--tls-on-connect' : '--tls'} \\`,
    `  --auth-user ${smtp?.username ?? 'mailrail'} --auth-password ${key} \\`,
    `  --from ${from} --to you@example.org --header "Subject: Hello over SMTP"`,
  ].join('\n');
};

const LANGUAGES = [
  { value: 'curl', label: 'curl' },
  { value: 'js', label: 'usesend-js' },
  { value: 'python', label: 'Python' },
  { value: 'smtp', label: 'SMTP' },
] as const;

/**
 * A ready-to-copy first email for this installation (same origin as the dashboard), in curl,
 * usesend-js, Python and SMTP. `apiKey` fills the key in (just created); without it the snippets
 * read it from $MAILRAIL_API_KEY.
 */
export function FirstEmailSnippet({
  domain = 'your-domain.example',
  apiKey,
  initial = 'curl',
}: {
  domain?: string;
  apiKey?: string;
  initial?: (typeof LANGUAGES)[number]['value'];
}) {
  const input = { origin: window.location.origin, key: apiKey ?? '$MAILRAIL_API_KEY', from: `hello@${domain}` };
  const snippets: Record<(typeof LANGUAGES)[number]['value'], string> = {
    curl: curlSnippet(input),
    js: jsSnippet(input),
    python: pythonSnippet(input),
    smtp: '',
  };
  return (
    <Tabs.Root defaultValue={initial} className="snippet-tabs">
      <Tabs.List className="tabs" aria-label="Send with">
        {LANGUAGES.map((l) => (
          <Tabs.Trigger key={l.value} value={l.value} className="tab">
            {l.label}
          </Tabs.Trigger>
        ))}
      </Tabs.List>
      {LANGUAGES.map((l) => (
        <Tabs.Content key={l.value} value={l.value} className="tab-panel">
          {l.value === 'smtp' ? <SmtpSnippet input={input} /> : <Snippet text={snippets[l.value]} label={l.label} />}
        </Tabs.Content>
      ))}
    </Tabs.Root>
  );
}

/** Loaded only when its tab is opened (Radix mounts the active tab only). */
function SmtpSnippet({ input }: { input: SnippetInput }) {
  const smtp = useTeamQuery<SmtpSettings>(['smtp-settings'], '/smtp-settings');
  return <Snippet text={smtpSnippet(input, smtp.data)} label="SMTP (swaks)" />;
}

function Snippet({ text, label }: { text: string; label: string }) {
  return (
    <div className="snippet">
      <pre tabIndex={0} aria-label={`${label}: send a first email`}>
        <code>{text}</code>
      </pre>
      <CopyButton value={text} label={`Copy the ${label} example`} />
    </div>
  );
}
