/** Polls `probe` until it returns a truthy value (returned), or throws after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T | null | undefined | false> | T | null | undefined | false,
  opts: {
    timeoutMs: number;
    intervalMs?: number;
    /** Named in the timeout error. */
    what?: string;
    /** Count a probe that throws as "not yet" (a process that is restarting, a socket closing). */
    ignoreErrors?: boolean;
  },
): Promise<T> {
  const until = Date.now() + opts.timeoutMs;
  for (;;) {
    const v = await (async () => probe())().catch((err) => {
      if (opts.ignoreErrors) return undefined;
      throw err;
    });
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${opts.what ?? 'condition'}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
  }
}
