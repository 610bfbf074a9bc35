import { existsSync } from 'node:fs';
import path from 'node:path';
import { Piscina } from 'piscina';
import { renderPreview, type PreviewInput, type PreviewOutcome } from '@mailrail/domain/campaigns/render-preview';
import { renderTemplatePreview, type TemplatePreviewInput, type TemplatePreviewOutcome } from '@mailrail/domain/templates/render-template';

// Campaign previews and test sends render on threads of their own, not on the event loop that
// answers every team's requests: a 2 MB body takes a few hundred milliseconds to render and turn
// into text, and one team's preview loops (within its PREVIEW_CONCURRENCY_PER_TEAM) held another
// team's p90 at half a second (fault scenario 13). piscina (a well-kept pool of worker_threads)
// queues the renders for PREVIEW_RENDER_THREADS threads; the budget gate still decides how many
// of a team's renders may wait for one.

export interface PreviewRenderer {
  render(input: PreviewInput): Promise<PreviewOutcome>;
  /** A transactional template's preview (templates/preview.ts), on the same threads. */
  renderTemplate(input: TemplatePreviewInput): Promise<TemplatePreviewOutcome>;
  close(): Promise<void>;
}

/**
 * The thread's entry: the compiled file next to the compiled API (npm run build), else the
 * TypeScript source, loaded through tsx as `npm run dev:api` and the tests load the API.
 */
function threadEntry(): { filename: string; execArgv: string[] } {
  const compiled = path.join(__dirname, 'render-thread.js');
  if (existsSync(compiled)) return { filename: compiled, execArgv: [] };
  return { filename: path.join(__dirname, 'render-thread.ts'), execArgv: ['--import', 'tsx'] };
}

export function createPreviewRenderer(threads: number): PreviewRenderer {
  // 0 threads: on the event loop (a deployment that wants none, and the contract tests of the renderer).
  if (threads === 0)
    return {
      render: async (input) => renderPreview(input),
      renderTemplate: async (input) => renderTemplatePreview(input),
      close: async () => undefined,
    };
  const { filename, execArgv } = threadEntry();
  const pool = new Piscina<PreviewInput | TemplatePreviewInput, PreviewOutcome | TemplatePreviewOutcome>({
    filename,
    execArgv,
    minThreads: 0,
    maxThreads: threads,
    // A thread nobody used for a minute ends; the next preview starts one again.
    idleTimeout: 60_000,
    // Below the event loop's priority (Linux nice +10, through @napi-rs/nice): on a busy machine
    // a render takes the CPU the requests leave, not the other way round.
    niceIncrement: 10,
  });
  return {
    render: (input) => pool.run(input) as Promise<PreviewOutcome>,
    // The thread's named export (render-thread.ts) for templates.
    renderTemplate: (input) => pool.run(input, { name: 'renderTemplateTask' }) as Promise<TemplatePreviewOutcome>,
    close: () => pool.destroy(),
  };
}
