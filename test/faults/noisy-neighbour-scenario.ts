// Noisy neighbour on exports and segment previews (issue 40): team A saturates both at its own
// limits (exports whose clients stop reading, costly previews in a loop) while team B sends and
// reads. B must keep being answered, /ready must stay 200, and B's p90 must stay within
// P90_FACTOR of its own baseline, measured in this scenario before A starts.
import { connect, type Socket } from 'node:net';
import { seedContacts } from '@mailrail/testing/contact-seed';
import { call } from './api-scenarios';
import { costlyFilter, neighbourTraffic, p90, p90Bound, tally } from './neighbour-traffic';
import { sleep, startStack, type ScenarioResult, type Stack, type Team } from './stack';

const PHASE_MS = 8_000;
const EXPORT_PER_TEAM = 2;
const SEGMENT_PER_TEAM = 2;

/** An export whose client takes the first bytes and then never reads again. */
function stalledExport(stack: Stack, team: Team, book: string): { socket: Socket; status: Promise<number> } {
  const url = new URL(stack.apiUrl);
  const socket = connect(Number(url.port), url.hostname);
  socket.on('error', () => undefined);
  socket.write(`GET /api/v1/contactBooks/${book}/contacts/export HTTP/1.1\r\nHost: x\r\nAuthorization: ${team.auth.Authorization}\r\n\r\n`);
  const status = new Promise<number>((resolve) =>
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 0));
    }),
  );
  return { socket, status };
}

export async function noisyExportsAndSegments(): Promise<ScenarioResult> {
  const stack = await startStack('noisy', {
    EXPORT_CONCURRENCY_PER_TEAM: String(EXPORT_PER_TEAM),
    SEGMENT_CONCURRENCY_PER_TEAM: String(SEGMENT_PER_TEAM),
    // Long enough that A's previews run to their end: the budget, not the timeout, is under test.
    SEGMENT_PREVIEW_TIMEOUT_MS: '30000',
  });
  const sockets: Socket[] = [];
  try {
    await stack.startApi();
    const a = stack.team;
    const b = await stack.addTeam('Neighbour', 'neighbour.example.com');
    const run = (text: string, params: unknown[]) => stack.db.$executeRawUnsafe(text, ...params);
    // A: a book far larger than socket buffers (~20 MB of CSV) to export, and a 30,000-contact book to preview.
    const exportBook = (await call(stack, a, 'post', '/contactBooks', { name: 'Export' })).json!.id as string;
    await seedContacts(run, exportBook, 8_000);
    await run(`UPDATE "Contact" SET properties = properties || jsonb_build_object('bio', repeat('b', 2500)) WHERE "contactBookId" = $1`, [
      exportBook,
    ]);
    const segmentBook = (await call(stack, a, 'post', '/contactBooks', { name: 'Segments' })).json!.id as string;
    await seedContacts(run, segmentBook, 30_000);
    await call(stack, b, 'post', '/contactBooks', { name: 'Mine' });

    const baseline = await neighbourTraffic(stack, b, PHASE_MS);

    // A at its limits: two exports that stall, two more refused; four preview loops, two of them refused.
    const exports = Array.from({ length: EXPORT_PER_TEAM + 2 }, () => stalledExport(stack, a, exportBook));
    sockets.push(...exports.map((e) => e.socket));
    const exportStatuses = await Promise.all(exports.map((e) => Promise.race([e.status, sleep(20_000).then(() => 0)])));
    const previewStatuses: number[] = [];
    let loading = true;
    const previewLoops = Array.from({ length: SEGMENT_PER_TEAM + 2 }, async () => {
      while (loading) {
        const res = await call(stack, a, 'post', `/contactBooks/${segmentBook}/segments/preview`, { filter: costlyFilter() });
        previewStatuses.push(res.status);
        // A refused preview is retried at the team's own request rate (the review's 10/s).
        if (res.status !== 200) await sleep(100);
      }
    });
    const loaded = await neighbourTraffic(stack, b, PHASE_MS);
    loading = false;
    await Promise.all(previewLoops);

    const baseP90 = p90(baseline.latencies);
    const loadP90 = p90(loaded.latencies);
    const bound = p90Bound(baseP90);
    const pass =
      baseline.failures.length === 0 &&
      loaded.failures.length === 0 &&
      baseline.readyFailures + loaded.readyFailures === 0 &&
      exportStatuses.filter((s) => s === 200).length === EXPORT_PER_TEAM &&
      exportStatuses.filter((s) => s === 429).length === 2 &&
      previewStatuses.includes(429) &&
      loadP90 <= bound;
    return {
      pass,
      figures:
        `a_exports=${tally(exportStatuses)} a_previews=${tally(previewStatuses)} ` +
        `b_baseline_requests=${baseline.latencies.length} b_baseline_p90_ms=${baseP90.toFixed(1)} ` +
        `b_loaded_requests=${loaded.latencies.length} b_loaded_p90_ms=${loadP90.toFixed(1)} b_p90_bound_ms=${bound.toFixed(1)} ` +
        `b_failures=${[...baseline.failures, ...loaded.failures].slice(0, 5).join(',') || 0} ready_failures=${baseline.readyFailures + loaded.readyFailures}`,
    };
  } finally {
    sockets.forEach((s) => s.destroy());
    await stack.close();
  }
}
