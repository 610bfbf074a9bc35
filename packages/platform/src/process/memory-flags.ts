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
 * the process starts): it is a process flag passed wherever the processes start.
 */
const HEAP_GROWING_PERCENT = 50;

export function useLowMemoryV8Flags(): void {
  setFlagsFromString('--liftoff-only');
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
