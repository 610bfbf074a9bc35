// Noisy neighbour on the worker's heavy operations (issue 40): team A saturates CSV imports and
// campaign preparation at its own limits (two large imports, two campaigns on a 20,000-contact book
// with the costliest segment filter the budget allows) while team B sends and reads, uploads a small
// import and sends a small campaign. B's import must complete and B's campaign reach SENT while A's
// first import is still running (the worker is fair across teams, not first come first served),
// every B request must be answered 200, /ready must stay 200, and B's p90 must stay within the
// bound of scenario 11, measured against its own baseline in this scenario before A starts.
import { seedContacts } from '@mailrail/testing/contact-seed';
import { call } from './api-scenarios';
import { costlyFilter, neighbourTraffic, p90, p90Bound } from './neighbour-traffic';
import { sleep, startStack, waitFor, type ScenarioResult, type Stack, type Team } from './stack';

const PHASE_MS = 8_000;
const A_IMPORT_ROWS = [60_000, 30_000];
const A_BOOK_CONTACTS = 20_000;
const B_IMPORT_ROWS = 20;
const B_BOOK_CONTACTS = 20;
const IMPORT_BATCH_SIZE = 1000;
const YIELD_EVERY_BATCHES = 2;
const OUTCOME_TIMEOUT_MS = 40_000;
const A_DONE_TIMEOUT_MS = 60_000;
const HTML = '<p>Hi {{firstName,fallback=there}}</p><p><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a></p>';

/** A CSV of `rows` distinct contacts. */
const csvOf = (prefix: string, rows: number) =>
  'email,firstName,city\n' +
  Array.from({ length: rows }, (_, i) => `${prefix}${i}@imports.example.net,${prefix}${i},Oslo`).join('\n') +
  '\n';

/** POST .../imports with the CSV as the multipart `file` part, as the dashboard and curl -F send it. */
async function uploadImport(stack: Stack, team: Team, bookId: string, csv: string, fileName: string) {
  const form = new FormData();
  form.append('file', new Blob([csv], { type: 'text/csv' }), fileName);
  const res = await fetch(`${stack.apiUrl}/api/v1/contactBooks/${bookId}/imports`, { method: 'POST', headers: team.auth, body: form });
  const json = (await res.json().catch(() => null)) as { id?: string } | null;
  return { status: res.status, id: json?.id ?? '' };
}

const newBook = async (stack: Stack, team: Team, name: string) =>
  (await call(stack, team, 'post', '/contactBooks', { name })).json!.id as string;

const sendNow = (stack: Stack, team: Team, contactBookId: string, segmentId?: string) =>
  call(stack, team, 'post', '/campaigns', {
    name: 'Noisy',
    from: `News <news@${team.domain.name}>`,
    subject: 'Hello {{firstName}}',
    contactBookId,
    html: HTML,
    sendNow: true,
    ...(segmentId ? { segmentId } : {}),
  });

export async function noisyImportsAndCampaigns(): Promise<ScenarioResult> {
  const stack = await startStack('noisy-worker', {
    CONTACT_IMPORT_CONCURRENCY_PER_TEAM: '1',
    // Room for one import on the whole server, which A holds: B's place can only come from A's
    // import stepping back after YIELD_EVERY_BATCHES batches.
    CONTACT_IMPORT_CONCURRENCY: '1',
    CONTACT_IMPORT_BATCH_SIZE: String(IMPORT_BATCH_SIZE),
    CONTACT_IMPORT_YIELD_EVERY_BATCHES: String(YIELD_EVERY_BATCHES),
    CAMPAIGN_PREPARATION_CONCURRENCY_PER_TEAM: '1',
  });
  try {
    await stack.startApi();
    await stack.startWorker();
    const a = stack.team;
    const b = await stack.addTeam('Neighbour', 'neighbour.example.com');
    const run = (text: string, params: unknown[]) => stack.db.$executeRawUnsafe(text, ...params);
    const audience = await newBook(stack, a, 'Audience');
    await seedContacts(run, audience, A_BOOK_CONTACTS);
    // Every contact's city is evaluated against 100 conditions; the last one matches Lima (one in 20, all subscribed).
    const segment = await call(stack, a, 'post', `/contactBooks/${audience}/segments`, { name: 'Costly', filter: costlyFilter('Lima') });
    const aImportBooks = [await newBook(stack, a, 'Imports 1'), await newBook(stack, a, 'Imports 2')];
    const bCampaignBook = await newBook(stack, b, 'Mine');
    await seedContacts(run, bCampaignBook, B_BOOK_CONTACTS);
    const bImportBook = await newBook(stack, b, 'Imported');
    // The worker is up (and has compiled its code) before B's baseline is measured.
    await call(stack, b, 'post', '/emails', { from: `n@${b.domain.name}`, to: 'warmup@example.com', subject: 'Hi', text: 'Hi' });
    await waitFor(async () => stack.ses.messages.length > 0, 60_000, 'the worker to send a first email');

    const baseline = await neighbourTraffic(stack, b, PHASE_MS);

    // A at its limits: two large imports (the second queued behind the first), two campaigns now on
    // the large book through the costly segment (the second waits for the first's preparation).
    const aUploads: Awaited<ReturnType<typeof uploadImport>>[] = [];
    for (const [i, rows] of A_IMPORT_ROWS.entries())
      aUploads.push(await uploadImport(stack, a, aImportBooks[i], csvOf(`a${i + 1}-`, rows), `a${i + 1}.csv`));
    const aCampaigns = [await sendNow(stack, a, audience, segment.json?.id), await sendNow(stack, a, audience, segment.json?.id)];
    const aImport = (i: number) => call(stack, a, 'get', `/contactBooks/${aImportBooks[i]}/imports/${aUploads[i].id}`);
    const aCampaign = (i: number) => call(stack, a, 'get', `/campaigns/${aCampaigns[i].json?.id}`);
    const importState = (r: Awaited<ReturnType<typeof aImport>>) => `${r.json?.status}:${r.json?.rowsRead}`;
    const startedAtLoad = importState(await aImport(0));

    // B, while A runs: its usual traffic, and a small import and a small campaign whose outcomes
    // are watched against A's first import.
    const loadedTraffic = neighbourTraffic(stack, b, PHASE_MS);
    const bFailures: string[] = [];
    const bCall = async (method: string, path: string, body?: unknown) => {
      const res = await call(stack, b, method, path, body);
      if (res.status !== 200) bFailures.push(`${method} ${path.split('/')[1]}:${res.status}`);
      return res;
    };
    const bUpload = await uploadImport(stack, b, bImportBook, csvOf('b-', B_IMPORT_ROWS), 'b.csv');
    if (bUpload.status !== 202) bFailures.push(`upload:${bUpload.status}`);
    const created = await sendNow(stack, b, bCampaignBook);
    if (created.status !== 200) bFailures.push(`campaign:${created.status}`);
    const bCampaignId = created.json?.id as string;

    // Each outcome is seen first, A's import read after it: if A's is still running then, it was
    // running when B's outcome happened.
    let aAtBImport = 'never';
    let aAtBCampaign = 'never';
    let aCampaignsAtBCampaign = '';
    let bImportState = '';
    let bCampaignState = '';
    const deadline = Date.now() + OUTCOME_TIMEOUT_MS;
    while (Date.now() < deadline && (aAtBImport === 'never' || aAtBCampaign === 'never')) {
      if (aAtBImport === 'never') {
        const r = await bCall('get', `/contactBooks/${bImportBook}/imports/${bUpload.id}`);
        bImportState = `${r.json?.status}:${r.json?.created}`;
        if (r.json?.status === 'completed' || r.json?.status === 'failed') aAtBImport = importState(await aImport(0));
      }
      if (aAtBCampaign === 'never') {
        const r = await bCall('get', `/campaigns/${bCampaignId}`);
        bCampaignState = `${r.json?.status}:${r.json?.sent}`;
        if (r.json?.status === 'SENT') {
          aAtBCampaign = importState(await aImport(0));
          aCampaignsAtBCampaign = (await Promise.all([aCampaign(0), aCampaign(1)]))
            .map((c) => `${c.json?.status}:${c.json?.sent}`)
            .join(',');
        }
      }
      await sleep(250);
    }
    const loaded = await loadedTraffic;

    // A is held to its share, not starved: its imports and campaigns end too.
    const aDone = await waitFor(
      async () =>
        (await Promise.all([aImport(0), aImport(1)])).every((r) => r.json?.status === 'completed') &&
        (await Promise.all([aCampaign(0), aCampaign(1)])).every((r) => r.json?.status === 'SENT'),
      A_DONE_TIMEOUT_MS,
      "A's imports and campaigns to end",
    ).then(
      () => true,
      () => false,
    );
    const aImportsFinal = (await Promise.all([aImport(0), aImport(1)])).map((r) => `${r.json?.status}:${r.json?.created}`);
    const aCampaignsFinal = (await Promise.all([aCampaign(0), aCampaign(1)])).map((r) => `${r.json?.status}:${r.json?.sent}`);

    const running = (state: string) => state.startsWith('queued:') || state.startsWith('running:');
    const bImportBeforeA = bImportState === `completed:${B_IMPORT_ROWS}` && running(aAtBImport);
    const bCampaignBeforeA = bCampaignState.startsWith('SENT:') && running(aAtBCampaign);
    const baseP90 = p90(baseline.latencies);
    const loadP90 = p90(loaded.latencies);
    const bound = p90Bound(baseP90);
    const allB = [...baseline.failures, ...loaded.failures, ...bFailures];
    const pass =
      allB.length === 0 &&
      baseline.readyFailures + loaded.readyFailures === 0 &&
      segment.status === 200 &&
      aUploads.every((u) => u.status === 202) &&
      aCampaigns.every((c) => c.status === 200) &&
      bImportBeforeA &&
      bCampaignBeforeA &&
      aDone &&
      aImportsFinal.join(',') === A_IMPORT_ROWS.map((n) => `completed:${n}`).join(',') &&
      loadP90 <= bound;
    return {
      pass,
      figures:
        `a_segment=${segment.status} a_uploads=${aUploads.map((u) => u.status).join(',')} a_campaigns=${aCampaigns.map((c) => c.status).join(',')} ` +
        `a_import_at_load_start=${startedAtLoad} a_import_at_b_import_done=${aAtBImport} a_import_at_b_campaign_sent=${aAtBCampaign} ` +
        `a_campaigns_at_b_campaign_sent=${aCampaignsAtBCampaign} ` +
        `b_import=${bImportState} b_campaign=${bCampaignState} ` +
        `b_import_done_before_a=${bImportBeforeA} b_campaign_sent_before_a_import=${bCampaignBeforeA} ` +
        `a_imports_final=${aImportsFinal.join(',')} a_campaigns_final=${aCampaignsFinal.join(',')} ` +
        `b_baseline_requests=${baseline.latencies.length} b_baseline_p90_ms=${baseP90.toFixed(1)} ` +
        `b_loaded_requests=${loaded.latencies.length} b_loaded_p90_ms=${loadP90.toFixed(1)} b_p90_bound_ms=${bound.toFixed(1)} ` +
        `b_failures=${allB.slice(0, 5).join(',') || 0} ready_failures=${baseline.readyFailures + loaded.readyFailures}`,
    };
  } finally {
    await stack.close();
  }
}
