import { setFlagsFromString } from 'node:v8';

/**
 * Compile WebAssembly with V8's baseline compiler (Liftoff) only. Prisma 7 runs its query
 * compiler as a WebAssembly module; V8 otherwise recompiles its hot functions with TurboFan, in
 * background threads, and the process keeps about 50 MB more resident for good (measured on the
 * compiled worker: 211–246 MB idle → 162–165 MB). The query compiler turns a Prisma call into
 * SQL; our hot paths (send, campaign window, sweep) use the SQL executor and never reach it.
 * Must run before the first Prisma query (the module is compiled then): first thing in main().
 * The young-generation cap (`--max-semi-space-size`) cannot be set this way (the heap is sized at
 * start): it is a process flag, see docs/worker.md "Memory".
 */
export function useLowMemoryV8Flags(): void {
  setFlagsFromString('--liftoff-only');
}
