import { parseArgs } from 'node:util';
import { CreateTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import {
  CreateConfigurationSetCommand,
  CreateConfigurationSetEventDestinationCommand,
  SESv2Client,
  UpdateConfigurationSetEventDestinationCommand,
  type EventType,
} from '@aws-sdk/client-sesv2';
import { EVENTS_BY_KIND, type TrackingKind } from './configuration-sets';
import { trimTrailing } from '@mailrail/platform/text/trim';

// `npm run cli -- ses setup --region R`: everything SES needs to report delivery events to us,
// for one region. Safe to run again: existing resources are kept and brought up to date.

export const EVENT_DESTINATION_NAME = 'mailrail-sns';

export interface SesSetupPlan {
  region: string;
  topicName: string;
  callbackUrl: string;
  configurationSets: { name: string; events: EventType[] }[];
}

export function buildSesSetupPlan(opts: {
  region: string;
  prefix: string;
  publicUrl: string;
  topicName?: string;
  callbackUrl?: string;
}): SesSetupPlan {
  return {
    region: opts.region,
    topicName: opts.topicName ?? `${opts.prefix}-${opts.region}-ses-events`,
    callbackUrl: opts.callbackUrl ?? `${trimTrailing(opts.publicUrl, '/')}/api/ses/notifications`,
    configurationSets: (Object.keys(EVENTS_BY_KIND) as TrackingKind[]).map((kind) => ({
      name: `${opts.prefix}-${kind}`,
      events: EVENTS_BY_KIND[kind],
    })),
  };
}

/** The two AWS clients, as far as this needs them (tests pass recording fakes). */
export interface SesSetupClients {
  sns: { send(command: CreateTopicCommand | SubscribeCommand): Promise<unknown> };
  ses: {
    send(
      command:
        CreateConfigurationSetCommand | CreateConfigurationSetEventDestinationCommand | UpdateConfigurationSetEventDestinationCommand,
    ): Promise<unknown>;
  };
}

export function awsSetupClients(region: string): SesSetupClients {
  return { sns: new SNSClient({ region }), ses: new SESv2Client({ region }) };
}

const alreadyExists = (err: unknown) => (err as { name?: string }).name === 'AlreadyExistsException';

export interface SesSetupResult {
  region: string;
  topicArn: string;
  subscriptionArn: string | null;
  callbackUrl: string;
  configurationSets: { name: string; created: boolean; events: EventType[] }[];
}

/** Stores the topic as one of ours (the API accepts only known topics); see sns-topics.ts. */
export type RecordSnsTopic = (topicArn: string, region: string) => Promise<void>;

export async function applySesSetup(plan: SesSetupPlan, clients: SesSetupClients, recordTopic?: RecordSnsTopic): Promise<SesSetupResult> {
  // CreateTopic and Subscribe are idempotent in SNS: they answer the existing ARN.
  const topic = (await clients.sns.send(new CreateTopicCommand({ Name: plan.topicName }))) as { TopicArn?: string };
  if (!topic.TopicArn) throw new Error('SNS CreateTopic answered without a TopicArn');
  // Before Subscribe: SNS posts the SubscriptionConfirmation at once, and the API confirms only known topics.
  await recordTopic?.(topic.TopicArn, plan.region);
  const protocol = new URL(plan.callbackUrl).protocol.replace(':', '');
  const subscription = (await clients.sns.send(
    new SubscribeCommand({ TopicArn: topic.TopicArn, Protocol: protocol, Endpoint: plan.callbackUrl, ReturnSubscriptionArn: true }),
  )) as { SubscriptionArn?: string };

  const configurationSets: SesSetupResult['configurationSets'] = [];
  for (const set of plan.configurationSets) {
    let created = true;
    try {
      await clients.ses.send(new CreateConfigurationSetCommand({ ConfigurationSetName: set.name }));
    } catch (err) {
      if (!alreadyExists(err)) throw err;
      created = false;
    }
    const destination = { Enabled: true, MatchingEventTypes: set.events, SnsDestination: { TopicArn: topic.TopicArn } };
    try {
      await clients.ses.send(
        new CreateConfigurationSetEventDestinationCommand({
          ConfigurationSetName: set.name,
          EventDestinationName: EVENT_DESTINATION_NAME,
          EventDestination: destination,
        }),
      );
    } catch (err) {
      if (!alreadyExists(err)) throw err;
      // Bring an existing destination in line (events or topic may have changed).
      await clients.ses.send(
        new UpdateConfigurationSetEventDestinationCommand({
          ConfigurationSetName: set.name,
          EventDestinationName: EVENT_DESTINATION_NAME,
          EventDestination: destination,
        }),
      );
    }
    configurationSets.push({ name: set.name, created, events: set.events });
  }
  return {
    region: plan.region,
    topicArn: topic.TopicArn,
    // "pending confirmation" until the API has confirmed it (it does so by itself when reachable).
    subscriptionArn: subscription.SubscriptionArn ?? null,
    callbackUrl: plan.callbackUrl,
    configurationSets,
  };
}

/** A bad flag: the CLI treats errors with an ERR_PARSE_ARGS code as usage errors (exit 2). */
function usageError(message: string): Error {
  return Object.assign(new TypeError(message), { code: 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' });
}

/** Sets are created under this prefix when SES_CONFIGURATION_SET_PREFIX is unset; the worker uses them once it is set. */
export const DEFAULT_CONFIGURATION_SET_PREFIX = 'mailrail';

/** `ses setup --region R [--topic-name N] [--callback-url URL]` for the admin CLI. */
export async function sesSetupCommand(
  args: string[],
  config: { PUBLIC_URL: string; SES_CONFIGURATION_SET_PREFIX?: string },
  clientsFor: (region: string) => SesSetupClients = awsSetupClients,
  recordTopic?: RecordSnsTopic,
): Promise<SesSetupResult> {
  const { values } = parseArgs({
    args,
    options: { region: { type: 'string' }, 'topic-name': { type: 'string' }, 'callback-url': { type: 'string' } },
    strict: true,
  });
  const region = values.region?.trim();
  if (!region) throw usageError('missing --region');
  if (!/^[a-z]{2}(-[a-z]+)+-\d$/.test(region)) throw usageError(`--region must be an AWS region such as us-east-1, got "${region}"`);
  const topicName = values['topic-name']?.trim();
  if (topicName !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(topicName))
    throw usageError('--topic-name may use letters, digits, - and _ only');
  const callbackUrl = values['callback-url']?.trim();
  if (callbackUrl !== undefined && !/^https?:\/\/[^\s/]+/.test(callbackUrl)) throw usageError('--callback-url must be an http(s) URL');
  const plan = buildSesSetupPlan({
    region,
    prefix: config.SES_CONFIGURATION_SET_PREFIX ?? DEFAULT_CONFIGURATION_SET_PREFIX,
    publicUrl: config.PUBLIC_URL,
    topicName,
    callbackUrl,
  });
  return applySesSetup(plan, clientsFor(region), recordTopic);
}
