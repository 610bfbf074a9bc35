// How long the inputs that once made a parser or a walk super-linear take now (issues 15 and 21):
// the address field, the string helpers, the campaign body's <body> search, the template renderer
// and the walk of a deep JSON body. The tests feed the same inputs and check the answers; the time
// is this script's, since a test cannot tell a slow algorithm from a busy machine (issue 41), and
// `npm run lint:recheck` decides every production regex linear without running it.
// Each input: its best of three runs after a warm-up at a tenth of the size (production runs warm
// code; a descheduled run says nothing about the algorithm, a super-linear one is slow on every run).
// Run: npx tsx bench/hostile-input/run.ts
import { performance } from 'node:perf_hooks';
import { parseAddress } from '@mailrail/domain/emails/address';
import { prepareCampaignBody } from '@mailrail/domain/campaigns/campaign-content';
import { renderTemplate } from '@mailrail/domain/render/template';
import { maskUrlCredentials, trimTrailing } from '@mailrail/platform/text/trim';
import { findUnsafeText } from '../../apps/api/src/http/unsafe-text';
import { writeResult } from '../report-kit';

/** Best of three, in ms, of `run` on `input`, after one run on `warm`. */
function bestOf<T>(run: (input: T) => unknown, input: T, warm: T): number {
  run(warm);
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    run(input);
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

const sized = (make: (n: number) => string, n: number) => ({ input: make(n), warm: make(Math.floor(n / 10)) });

function group(label: string, cases: Record<string, { input: string; warm: string }>, run: (input: string) => unknown): number {
  let worst = 0;
  for (const [kind, { input, warm }] of Object.entries(cases)) {
    const ms = bestOf(run, input, warm);
    worst = Math.max(worst, ms);
    console.log(`| ${label} | ${kind} | ${input.length.toLocaleString('en-US')} | ${ms.toFixed(2)} ms |`);
  }
  return worst;
}

const N = 100_000;
console.log('| function | input | characters | best of 3 |\n|---|---|---|---|');
const figures = {
  addressWorstMs: group(
    'parseAddress',
    {
      'spaces then x, over the field cap': sized((n) => `${' '.repeat(n)}x`, 4000),
      'spaces then x': sized((n) => `${' '.repeat(n)}x`, 990),
      'spaces then <x': sized((n) => `${' '.repeat(n)}<x`, 990),
      'quote, spaces, <address>': sized((n) => `"${' '.repeat(n)}<a@b.example>`, 990),
      'letters then >': sized((n) => `${'a'.repeat(n)}>`, 990),
    },
    parseAddress,
  ),
  stringHelpersWorstMs: Math.max(
    group('trimTrailing', { 'a run of / not at the end': sized((n) => `/api/v1${'/'.repeat(n)}x`, 200_000) }, (s) => trimTrailing(s, '/')),
    group('maskUrlCredentials', { 'many // without an @': sized((n) => `x:${'//'.repeat(n)}`, 100_000) }, maskUrlCredentials),
  ),
  campaignBodyMs: group('prepareCampaignBody', { '<BODY repeated, no >': sized((n) => '<BODY'.repeat(n), 24_000) }, (html) =>
    prepareCampaignBody({ subject: 's', html, previewText: 'P' }),
  ),
  templateWorstMs: group(
    'renderTemplate',
    {
      'fallback then spaces': sized((n) => `{{a,fallback=${' '.repeat(n)}`, N),
      'fallback, spaces, one brace': sized((n) => `{{a,fallback=x${' '.repeat(n)}}`, N),
      'fallback, spaces, closed': sized((n) => `{{a,fallback=x${' '.repeat(n)}}}`, N),
      'name then spaces': sized((n) => `{{a${' '.repeat(n)}x`, N),
      'open then spaces': sized((n) => `{{${' '.repeat(n)}`, N),
      'runs of {{': sized((n) => '{{'.repeat(n / 2), N),
      'runs of {{ with a space': sized((n) => '{{ '.repeat(n / 3), N),
      'nested braces': sized((n) => `${'{'.repeat(n / 2)}a${'}'.repeat(n / 2)}`, N),
      commas: sized((n) => `{{a${','.repeat(n)}`, N),
      'quotes in a fallback': sized((n) => `{{a,fallback=${'"'.repeat(n)}`, N),
      'repeated unclosed fallbacks': sized((n) => '{{a,fallback='.repeat(n / 13), N),
      'repeated fallbacks, one close far away': sized((n) => `${'{{a , fallback = '.repeat(n / 18)}}`, N),
      'contact. runs': sized((n) => '{{contact.'.repeat(n / 10), N),
      'mixed whitespace': sized((n) => `{{a,fallback=${'\t\u00a0\n\u2028'.repeat(n / 4)}`, N),
      'many placeholders': sized((n) => '{{a,fallback=x}}{{ b }}'.repeat(n / 23), N),
    },
    (text) => renderTemplate(text, { b: 'B' }, { escapeHtml: true }),
  ),
  // What the API does with such a body: JSON.parse (express.json), then the walk for NUL and lone surrogates.
  deepJsonBodyMs: group(
    'findUnsafeText',
    { '100,000-deep array, NUL at the bottom': sized((n) => `${'['.repeat(n)}"\\u0000"${']'.repeat(n)}`, N) },
    (body) => findUnsafeText(JSON.parse(body)),
  ),
};
writeResult('hostile-input', figures);
