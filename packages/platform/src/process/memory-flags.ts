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
 * the relay: 50 %, so a campaign's garbage is collected before it fills the heap (V8's default let
 * the worker's RSS climb towards its memory target). The API: 300 %. Under a high send rate each
 * request's objects reach the old generation at every scavenge, and with 50 % a full GC came so
 * often that its pauses made most of the slow answers; 300 % trades a higher peak RSS under load
 * (idle RSS is unchanged) for a lower p99. The measurements: bench/HISTORY.md, 2026-11-29.
 */
export const HEAP_GROWING_PERCENT: Record<NodeApp, number> = { api: 300, worker: 50, smtp: 50 };

/**
 * Each process's semi-space cap in MB (docs/worker.md, "Memory"). The relay keeps 2 MB for its idle
 * memory. The worker takes V8's own 16 MB: each send in flight holds its row, MIME and SDK request
 * for the length of an SES call, and with smaller semi-spaces the scavenges came faster than that
 * and copied them again and again; larger ones put its campaign peak over its memory target. The
 * API takes 16 MB too: each 100-email batch in flight is young garbage, which smaller semi-spaces
 * copied over and over; its idle RSS is the same either way. The measurements: bench/HISTORY.md.
 */
export const SEMI_SPACE_MB: Record<NodeApp, number> = { api: 16, worker: 16, smtp: 2 };

/** The flag every way of starting `app` passes (npm scripts, Dockerfile, compose, start-all, benches); deploy tests hold them to it. */
export const youngGenerationFlag = (app: NodeApp) => `--max-semi-space-size=${SEMI_SPACE_MB[app]}`;
