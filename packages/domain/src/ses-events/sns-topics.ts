import type { Db } from '@mailrail/platform/db/client';

// The SNS topics mailrail owns: the ones `ses setup` created (stored in SnsTopic) and the ones
// the operator lists in SNS_TOPIC_ARNS. POST /api/ses/notifications refuses every other topic,
// so a stranger cannot subscribe a topic of their own to us and publish forged SES events.

/** Stores a topic `ses setup` created; idempotent. Called before Subscribe, so the confirmation SNS sends at once is accepted. */
export async function rememberSnsTopic(db: Db, arn: string, region: string): Promise<void> {
  await db.snsTopic.upsert({ where: { arn }, create: { arn, region }, update: {} });
}

export async function listOwnedSnsTopicArns(db: Db): Promise<string[]> {
  return (await db.snsTopic.findMany({ select: { arn: true } })).map((t) => t.arn);
}

/** SNS_TOPIC_ARNS as a list (comma-separated, blanks ignored). */
export function configuredSnsTopicArns(value: string | undefined): string[] {
  return (
    value
      ?.split(',')
      .map((a) => a.trim())
      .filter(Boolean) ?? []
  );
}
