// Which SNS topics may post to us: SNS_TOPIC_ARNS plus the topics `ses setup` stored (SnsTopic).
// The stored list is small and read into memory; an unknown topic re-reads it at most once per
// RELOAD_MS, so a topic set up a moment ago is accepted and a flood of strangers costs no queries.

const RELOAD_MS = 5_000;

export interface TopicPolicy {
  isAccepted(topicArn: string): Promise<boolean>;
}

export function createTopicPolicy(opts: { configured: string[]; loadStored: () => Promise<string[]>; now?: () => number }): TopicPolicy {
  const now = opts.now ?? Date.now;
  const configured = new Set(opts.configured);
  let stored = new Set<string>();
  let loadedAt = -Infinity;
  let loading: Promise<void> | null = null;

  function reload(): Promise<void> {
    loading ??= opts
      .loadStored()
      .then((arns) => {
        stored = new Set(arns);
        loadedAt = now();
      })
      .finally(() => {
        loading = null;
      });
    return loading;
  }

  return {
    async isAccepted(topicArn) {
      if (configured.has(topicArn) || stored.has(topicArn)) return true;
      if (now() - loadedAt < RELOAD_MS) return false;
      await reload();
      return stored.has(topicArn);
    },
  };
}
