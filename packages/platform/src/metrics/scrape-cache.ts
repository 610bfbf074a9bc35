/**
 * One rendering of /metrics shared by every scraper: the text is rendered at most once per
 * `maxAgeMs`, and scrapes that arrive while a rendering runs wait for that one. A render costs
 * tens of milliseconds of CPU (the registry's text, queue depths from Redis), so scrapers, however
 * many, cost the process at most one render per period (0: no reuse, still one at a time).
 */
export function createScrapeCache(render: () => Promise<string>, opts: { maxAgeMs: number; now?: () => number }): () => Promise<string> {
  const now = opts.now ?? Date.now;
  let last: { text: string; renderedAt: number } | null = null;
  let rendering: Promise<string> | null = null;
  return () => {
    if (last && now() - last.renderedAt < opts.maxAgeMs) return Promise.resolve(last.text);
    rendering ??= render()
      .then((text) => {
        last = { text, renderedAt: now() };
        return text;
      })
      .finally(() => {
        rendering = null;
      });
    return rendering;
  };
}
