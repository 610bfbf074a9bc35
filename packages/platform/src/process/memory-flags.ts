import { setFlagsFromString } from 'node:v8';

/**
 * V8 settings that keep each process's memory down (docs/worker.md, "Memory"). Must run before
 * the first Prisma query: first thing in main().
 *
 * - `--liftoff-only`: compile WebAssembly with V8's baseline compiler only. Prisma 7 runs its
 *   query compiler as a WebAssembly module; V8 otherwise recompiles its hot functions with
 *   TurboFan in background threads and the process keeps about 50 MB more resident for good.
 *   The hot paths (send, campaign window, sweep) use the SQL executor, not the query compiler.
 * - `--heap-growing-percent`: how far the old generation may grow past what survived the last
 *   full GC before the next one (HEAP_GROWING_PERCENT). Not a heap cap: the heap still grows as
 *   far as live data needs.
 *
 * The young-generation cap (`--max-semi-space-size`) cannot be set here (the heap is sized when
 * the process starts): it is a process flag passed wherever the processes start (youngGenerationFlag).
 */
export function useLowMemoryV8Flags(app: NodeApp): void {
  setFlagsFromString('--liftoff-only');
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT[app]}`);
}

export type NodeApp = 'api' | 'worker' | 'smtp';

/**
 * Old-generation growth between full GCs, per process (docs/worker.md, "Memory"). The worker and
 * the relay: 50 %. Without it, V8 let the worker's heap fill with garbage to ~175 MB during a
 * 5,000-recipient campaign before collecting it. The API: 300 %. At 2,000 sends/s about 3 MB of
 * each request's objects reach the old generation every scavenge, so with 50 % a full GC came
 * every half second. Its pauses and marking, on a 2-core machine, were three quarters of the
 * answers over 20 ms, and p99 was 25-34 ms. With 300 % a full GC comes every 2-3 s, and p99 was
 * 13-21 ms. The price is peak RSS under that load: about 290 MB against 185 MB. Idle RSS is
 * unchanged (bench/RESULTS.md, 2026-11-29).
 */
export const HEAP_GROWING_PERCENT: Record<NodeApp, number> = { api: 300, worker: 50, smtp: 50 };

/**
 * Each process's semi-space cap in MB (docs/worker.md, "Memory"). The relay keeps 2 MB for its idle
 * memory. The worker takes V8's own 16 MB: each send in flight holds its row, MIME and SDK request
 * for about 100 ms, and with smaller semi-spaces the scavenges came faster than that and copied
 * them again and again (garbage collection 0.40 ms per email at 4 MB, 0.19 ms at 16 MB); its
 * campaign peak is 238 MB (230 MB at 4 MB; 281 MB at 32 MB, over the 256 MB target). The API
 * takes 16 MB too: each 100-email batch in flight is young garbage, and with 2 MB semi-spaces the
 * scavenges copied it over and over, 1.2 to 1.6 times the CPU per batch; its idle RSS is the same,
 * 120 MB against 117 MB 40 s after a burst (bench/RESULTS.md).
 */
export const SEMI_SPACE_MB: Record<NodeApp, number> = { api: 16, worker: 16, smtp: 2 };

/** The flag every way of starting `app` passes (npm scripts, Dockerfile, compose, start-all, benches); deploy tests hold them to it. */
export const youngGenerationFlag = (app: NodeApp) => `--max-semi-space-size=${SEMI_SPACE_MB[app]}`;
