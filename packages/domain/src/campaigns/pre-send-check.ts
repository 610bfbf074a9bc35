import { templatePlaceholders } from '../render/template';
import { hasUnsubscribePlaceholder, UNSUBSCRIBE_REQUIRED } from './campaign-content';
import { STARTER_SENTENCE } from './campaign-starter';

// The rules of the pre-send check (docs/campaigns.md "Pre-send check"), without I/O: the API's
// service gathers the facts (audience counts, the sender domain, the properties contacts have) and
// these turn them into problems. An `error` blocks scheduling and sending; a `warning` is shown
// but never blocks, so a useSend client that sends what useSend accepts is not refused.

export type PreSendSeverity = 'error' | 'warning';

/** In the order a reader goes through a campaign: who sends, the envelope, who gets it, the body. */
export const PRE_SEND_RULES = [
  'senderDomain',
  'subject',
  'previewText',
  'audience',
  'unsubscribeLink',
  'starterText',
  'placeholderText',
  'variables',
] as const;
export type PreSendRule = (typeof PRE_SEND_RULES)[number];

export interface PreSendProblem {
  rule: PreSendRule;
  severity: PreSendSeverity;
  message: string;
  /** The campaign field it concerns (`html`, `subject`, `from`, ...), for a form to show it there. */
  field: string;
}

// Text that is a stand-in for content: a warning (it may be meant, as in a test campaign).
const PLACEHOLDER_PHRASES = ['lorem ipsum', 'your text here', 'your message here', 'insert text here', 'placeholder text'];

/** Names every campaign email has a value for (campaign-content.ts, contactVariables). */
const BUILT_IN_VARIABLES = new Set(['email', 'firstname', 'lastname', 'usesend_unsubscribe_url', 'unsend_unsubscribe_url']);

/** At most this many personalisation variables are looked up in the audience (each reads the book once). */
export const MAX_CHECKED_VARIABLES = 20;

export interface CampaignText {
  subject: string;
  previewText: string | null;
  html: string | null;
}

// The HTML as it is (not converted to text, which costs seconds on a large body): the phrases are
// looked for in its lower-cased text with runs of whitespace made one space.
const plain = (html: string) => html.toLowerCase().replace(/\s+/g, ' ');

/** Subject, preview text, unsubscribe link, starter and placeholder text. */
export function contentProblems(c: CampaignText): PreSendProblem[] {
  const problems: PreSendProblem[] = [];
  if (!c.subject.trim()) problems.push({ rule: 'subject', severity: 'error', field: 'subject', message: 'The subject is empty' });
  if (!c.previewText?.trim())
    problems.push({
      rule: 'previewText',
      severity: 'warning',
      field: 'previewText',
      message: 'No preview text: mail clients show the first words of the body beside the subject instead',
    });
  if (!c.html?.trim()) {
    problems.push({ rule: 'unsubscribeLink', severity: 'error', field: 'html', message: 'No content added for campaign' });
    return problems;
  }
  if (!hasUnsubscribePlaceholder(c.html))
    problems.push({ rule: 'unsubscribeLink', severity: 'error', field: 'html', message: UNSUBSCRIBE_REQUIRED });
  const text = `${c.subject.toLowerCase()} ${plain(c.html)}`;
  if (text.includes(STARTER_SENTENCE)) {
    problems.push({
      rule: 'starterText',
      severity: 'error',
      field: 'html',
      message: 'The body still has the starter text "Write your message here.": replace it with your message',
    });
  } else {
    const phrase = PLACEHOLDER_PHRASES.find((p) => text.includes(p));
    if (phrase)
      problems.push({
        rule: 'placeholderText',
        severity: 'warning',
        field: 'html',
        message: `The text reads like a placeholder ("${phrase}")`,
      });
  }
  return problems;
}

/** The personalisation variables of the subject and body that contacts must supply (built-ins excluded), at most MAX_CHECKED_VARIABLES. */
export function contactVariablesUsed(c: CampaignText): { name: string; hasFallback: boolean }[] {
  const byName = new Map<string, { name: string; hasFallback: boolean }>();
  for (const v of [...templatePlaceholders(c.subject), ...templatePlaceholders(c.html ?? '')]) {
    const key = v.name.toLowerCase();
    if (BUILT_IN_VARIABLES.has(key)) continue;
    const seen = byName.get(key);
    if (seen) seen.hasFallback &&= v.hasFallback;
    else byName.set(key, { ...v });
  }
  return [...byName.values()].slice(0, MAX_CHECKED_VARIABLES);
}

/** A warning per variable no contact of the audience has a value for. */
export function missingVariableProblems(missing: { name: string; hasFallback: boolean }[]): PreSendProblem[] {
  return missing.map((v) => ({
    rule: 'variables',
    severity: 'warning',
    field: 'html',
    message: v.hasFallback
      ? `No contact has a value for {{${v.name}}}: every email shows its fallback`
      : `No contact has a value for {{${v.name}}}, and it has no fallback: every email shows it as written`,
  }));
}

export interface PreSendAudience {
  /** Subscribed contacts of the book (of the segment, when the campaign targets one). */
  subscribed: number;
  /** Of those, addresses on the team's suppression list: recorded as suppressed, never sent to. */
  suppressed: number;
  /** Contacts of the book (or segment) that unsubscribed: never part of the audience. */
  unsubscribed: number;
  /** Who gets it: subscribed minus suppressed. */
  recipients: number;
  /** True once the campaign has started: the audience is its recipient rows, fixed then. */
  fixed: boolean;
}

export const NO_SUBSCRIBED_CONTACTS = 'No subscribed contacts to send';

export function audienceProblems(a: PreSendAudience, segment: boolean): PreSendProblem[] {
  const field = segment ? 'segmentId' : 'contactBookId';
  if (a.fixed) return [];
  if (a.subscribed === 0) return [{ rule: 'audience', severity: 'error', field, message: NO_SUBSCRIBED_CONTACTS }];
  if (a.recipients === 0)
    return [
      {
        rule: 'audience',
        severity: 'error',
        field,
        message: 'Every subscribed contact is on the suppression list: nobody would get this campaign',
      },
    ];
  return [];
}

/** Errors first (in rule order), then warnings. */
export function sortProblems(problems: PreSendProblem[]): PreSendProblem[] {
  const rank = (p: PreSendProblem) => (p.severity === 'error' ? 0 : 100) + PRE_SEND_RULES.indexOf(p.rule);
  return [...problems].sort((a, b) => rank(a) - rank(b));
}
