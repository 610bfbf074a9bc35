import { setFlagsFromString } from 'node:v8';

/**
 * V8 settings that keep each process's memory down (docs/worker.md, "Memory"). Must run before
 * the first Prisma query: first thing in main().
 *
 * - `--liftoff-only`: compile WebAssembly with V8's baseline compiler only. Prisma 7 runs its
 *   query compiler as a WebAssembly module; V8 otherwise recompiles its hot functions with
 *   TurboFan in background threads and the process keeps about 50 MB more resident for good.
 *   The hot paths (send, campaign window, sweep) use the SQL executor, not the query compiler.
 * - `--heap-growing-percent`: after a full GC V8 lets the old generation grow to several times
 *   what survived before the next one; during a campaign the worker's heap filled with garbage up
 *   to ~175 MB (5,000 recipients) before it was collected. HEAP_GROWING_PERCENT is the growth
 *   allowed instead. Not a heap cap: the heap still grows as far as live data needs.
 *
 * The young-generation cap (`--max-semi-space-size`) cannot be set here (the heap is sized when
 * the process starts): it is a process flag passed wherever the processes start (youngGenerationFlag).
 */
const HEAP_GROWING_PERCENT = 50;

export function useLowMemoryV8Flags(): void {
  setFlagsFromString('--liftoff-only');
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

export type NodeApp = 'api' | 'worker' | 'smtp';

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
