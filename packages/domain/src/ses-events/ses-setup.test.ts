import { configurationSetName } from './configuration-sets';
import { applySesSetup, buildSesSetupPlan, sesSetupCommand, type SesSetupClients } from './ses-setup';

// The AWS SDK clients are replaced by recorders (AWS is not reachable from tests); what is
// checked is the exact list of calls and their inputs, first run and re-run.

function recorder(failWith: Record<string, string> = {}) {
  const calls: { command: string; input: Record<string, unknown> }[] = [];
  const send = async (command: { constructor: { name: string }; input: unknown }) => {
    const name = command.constructor.name;
    calls.push({ command: name, input: command.input as Record<string, unknown> });
    if (failWith[name]) throw Object.assign(new Error(failWith[name]), { name: failWith[name] });
    if (name === 'CreateTopicCommand') return { TopicArn: 'arn:aws:sns:eu-west-1:1:mailrail-eu-west-1-ses-events' };
    if (name === 'SubscribeCommand') return { SubscriptionArn: 'pending confirmation' };
    return {};
  };
  return { calls, clients: { sns: { send }, ses: { send } } as unknown as SesSetupClients };
}

describe('ses setup', () => {
  const plan = buildSesSetupPlan({ region: 'eu-west-1', prefix: 'mailrail', publicUrl: 'https://mail.example.com/' });

  it('plans a topic, an HTTPS subscription to our endpoint and four configuration sets', () => {
    expect(plan.topicName).toBe('mailrail-eu-west-1-ses-events');
    expect(plan.callbackUrl).toBe('https://mail.example.com/api/ses/notifications');
    expect(plan.configurationSets.map((s) => s.name)).toEqual(['mailrail-general', 'mailrail-click', 'mailrail-open', 'mailrail-full']);
    const [general, click, open, full] = plan.configurationSets;
    expect(general.events).toHaveLength(8);
    expect(general.events).not.toContain('OPEN');
    expect(click.events).toContain('CLICK');
    expect(click.events).not.toContain('OPEN');
    expect(open.events).toContain('OPEN');
    expect(full.events).toEqual(expect.arrayContaining(['CLICK', 'OPEN', 'SUBSCRIPTION', 'DELIVERY_DELAY', 'RENDERING_FAILURE']));
  });

  it('takes --topic-name and --callback-url over the defaults', () => {
    const p = buildSesSetupPlan({
      region: 'us-east-1',
      prefix: 'x',
      publicUrl: 'http://localhost',
      topicName: 't',
      callbackUrl: 'https://hook.example.com/sns',
    });
    expect(p).toMatchObject({ topicName: 't', callbackUrl: 'https://hook.example.com/sns' });
  });

  it('creates everything on a first run', async () => {
    const { calls, clients } = recorder();
    const result = await applySesSetup(plan, clients);
    expect(calls.map((c) => c.command)).toEqual([
      'CreateTopicCommand',
      'SubscribeCommand',
      ...Array(4).fill(['CreateConfigurationSetCommand', 'CreateConfigurationSetEventDestinationCommand']).flat(),
    ]);
    expect(calls[1].input).toEqual({
      TopicArn: result.topicArn,
      Protocol: 'https',
      Endpoint: 'https://mail.example.com/api/ses/notifications',
      ReturnSubscriptionArn: true,
    });
    expect(calls[3].input).toMatchObject({
      ConfigurationSetName: 'mailrail-general',
      EventDestinationName: 'mailrail-sns',
      EventDestination: { Enabled: true, SnsDestination: { TopicArn: result.topicArn } },
    });
    expect(result.configurationSets.every((s) => s.created)).toBe(true);
  });

  it('records the topic as one of ours before subscribing (the API confirms only known topics)', async () => {
    const { calls, clients } = recorder();
    const order: string[] = [];
    const recorded: [string, string][] = [];
    const tracking = {
      sns: { send: async (c: never) => (order.push((c as { constructor: { name: string } }).constructor.name), clients.sns.send(c)) },
      ses: clients.ses,
    } as unknown as SesSetupClients;
    await applySesSetup(plan, tracking, async (arn, region) => {
      order.push('record');
      recorded.push([arn, region]);
    });
    expect(recorded).toEqual([['arn:aws:sns:eu-west-1:1:mailrail-eu-west-1-ses-events', 'eu-west-1']]);
    expect(order).toEqual(['CreateTopicCommand', 'record', 'SubscribeCommand']);
    expect(calls).toHaveLength(10);
  });

  it('is idempotent: existing configuration sets are kept and their destinations updated', async () => {
    const { calls, clients } = recorder({
      CreateConfigurationSetCommand: 'AlreadyExistsException',
      CreateConfigurationSetEventDestinationCommand: 'AlreadyExistsException',
    });
    const result = await applySesSetup(plan, clients);
    expect(calls.filter((c) => c.command === 'UpdateConfigurationSetEventDestinationCommand')).toHaveLength(4);
    expect(result.configurationSets.every((s) => !s.created)).toBe(true);
  });

  it('stops on any other AWS error', async () => {
    const { clients } = recorder({ CreateConfigurationSetCommand: 'AccessDeniedException' });
    await expect(applySesSetup(plan, clients)).rejects.toThrow('AccessDeniedException');
  });

  it('names the configuration set a message uses after the domain tracking flags', () => {
    expect(configurationSetName('mailrail', { clickTracking: false, openTracking: false })).toBe('mailrail-general');
    expect(configurationSetName('mailrail', { clickTracking: true, openTracking: false })).toBe('mailrail-click');
    expect(configurationSetName('mailrail', { clickTracking: false, openTracking: true })).toBe('mailrail-open');
    expect(configurationSetName('mailrail', { clickTracking: true, openTracking: true })).toBe('mailrail-full');
  });
});

describe('ses setup command', () => {
  const config = { PUBLIC_URL: 'https://mail.example.com', SES_CONFIGURATION_SET_PREFIX: 'acme' };

  it('runs the plan for the region with the configured prefix', async () => {
    const { calls, clients } = recorder();
    const regions: string[] = [];
    const result = await sesSetupCommand(['--region', 'eu-west-1'], config, (r) => (regions.push(r), clients));
    expect(regions).toEqual(['eu-west-1']);
    expect(result.configurationSets.map((s) => s.name)).toEqual(['acme-general', 'acme-click', 'acme-open', 'acme-full']);
    expect(calls[0].input).toEqual({ Name: 'acme-eu-west-1-ses-events' });
  });

  it('refuses missing or bad flags as usage errors', async () => {
    for (const args of [
      [],
      ['--region', 'nowhere'],
      ['--region', 'us-east-1', '--callback-url', 'ftp://x'],
      ['--region', 'us-east-1', '--bogus'],
    ]) {
      await expect(sesSetupCommand(args, config, () => recorder().clients)).rejects.toMatchObject({
        code: expect.stringMatching(/^ERR_PARSE_ARGS/),
      });
    }
  });
});
