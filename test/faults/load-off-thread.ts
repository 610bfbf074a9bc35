import { Worker } from 'node:worker_threads';

// A noisy team's heavy requests, sent from a thread of their own. The scenario's thread times
// team B's requests: if it also serialized A's 2 MB bodies and parsed A's 4 MB answers, B's
// latencies would count the runner's event loop, not the API (scenario 13 measured exactly that).
// CommonJS source, as the thread runs it without the test's TypeScript loader.
const LOOPS = `
const { parentPort, workerData } = require('node:worker_threads');
const { url, headers, body, loops, pauseAfterRefusalMs } = workerData;
const statuses = [];
let running = true;
parentPort.on('message', () => { running = false; });
const loop = async () => {
  while (running) {
    let status = 0;
    try {
      const res = await fetch(url, { method: 'POST', headers, body });
      // Read to the end (the API's work includes sending it), never parsed.
      await res.arrayBuffer();
      status = res.status;
    } catch {
      status = 0;
    }
    statuses.push(status);
    if (status !== 200) await new Promise((r) => setTimeout(r, pauseAfterRefusalMs));
  }
};
Promise.all(Array.from({ length: loops }, loop)).then(() => parentPort.postMessage(statuses));
`;

export interface LoadOffThread {
  /** Ends the loops after their requests in flight; resolves with every answer's status (0: no answer). */
  stop(): Promise<number[]>;
}

/**
 * `loops` clients posting `body` (already JSON) to `url` one request after another until stopped;
 * after a refusal a client waits `pauseAfterRefusalMs`, as a client backing off would.
 */
export function postLoopsOffThread(opts: {
  url: string;
  headers: Record<string, string>;
  body: string;
  loops: number;
  pauseAfterRefusalMs: number;
}): LoadOffThread {
  const worker = new Worker(LOOPS, {
    eval: true,
    workerData: { ...opts, headers: { ...opts.headers, 'Content-Type': 'application/json' } },
  });
  const done = new Promise<number[]>((resolve, reject) => {
    worker.once('message', (statuses: number[]) => resolve(statuses));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`load thread exited (${code}) before it reported`)));
  });
  return {
    async stop() {
      worker.postMessage('stop');
      try {
        return await done;
      } finally {
        await worker.terminate();
      }
    },
  };
}
