// Bounds the SES calls in flight of one lane (SEND_CONCURRENCY) while the lane's BullMQ worker
// runs more jobs than that: a job holds a slot from right before it books its rate permits until
// SES answered, and waits for its group claim (claim-committer.ts) and for its acceptance to be
// written (acceptance-committer.ts) without it. The same counter bounds a lane's emails in flight
// (send-worker.ts), whatever the number of emails its jobs carry.

export interface SesCallSlots {
  /** Waits for a free slot; call the answered function (once or more) once the SES call is over. */
  take(): Promise<() => void>;
}

export function createSesCallSlots(size: number): SesCallSlots {
  let free = size;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else free++;
  };
  return {
    async take() {
      if (free > 0) free--;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      let released = false;
      return () => {
        if (!released) {
          released = true;
          release();
        }
      };
    },
  };
}
