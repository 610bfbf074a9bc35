import { SESv2Client } from '@aws-sdk/client-sesv2';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Agent } from 'node:https';
import { Agent as HttpAgent } from 'node:http';
import type { Config } from '../config/schema';

export interface SesClientOptions {
  /** Per-call timeout; the SDK does not retry by itself, callers own the retry policy. */
  timeoutMs?: number;
  /** Sockets kept open per client (at least the number of calls in flight). */
  maxSockets?: number;
  /**
   * The SDK's `cacheMiddleware`: the middleware stack is resolved once per command class instead
   * of on every call. Only for a caller that never adds middleware to a command (ses-sender.ts).
   */
  cacheMiddleware?: boolean;
}

type CredentialProvider = ReturnType<typeof defaultProvider>;
type Credentials = Awaited<ReturnType<CredentialProvider>>;

const DUMMY: Credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * The standard AWS credential chain; with SES_ENDPOINT set (a local or fake SES), dummy
 * credentials stand in when the chain finds none, so development needs no AWS account.
 */
export function sesCredentials(config: Pick<Config, 'SES_ENDPOINT'>): CredentialProvider | undefined {
  if (!config.SES_ENDPOINT) return undefined;
  const chain = defaultProvider();
  // The chain memoizes and refreshes real credentials itself; once it has found none, asking it
  // again would repeat its slow probes (instance metadata) on every call.
  let chainIsEmpty = false;
  return async () => {
    if (chainIsEmpty) return DUMMY;
    try {
      return await chain();
    } catch {
      chainIsEmpty = true;
      return DUMMY;
    }
  };
}

/** One SES v2 client for a region, honouring SES_ENDPOINT and the credential chain. */
export function createSesClient(config: Pick<Config, 'SES_ENDPOINT'>, region: string, opts: SesClientOptions = {}): SESv2Client {
  const maxSockets = opts.maxSockets ?? 50;
  const agentOpts = { keepAlive: true, maxSockets };
  return new SESv2Client({
    region,
    endpoint: config.SES_ENDPOINT,
    credentials: sesCredentials(config),
    maxAttempts: 1,
    cacheMiddleware: opts.cacheMiddleware,
    requestHandler: {
      requestTimeout: opts.timeoutMs,
      // Without it the SDK only warns and keeps waiting: a hung call would outlive the send lease.
      throwOnRequestTimeout: true,
      connectionTimeout: opts.timeoutMs,
      httpAgent: new HttpAgent(agentOpts),
      httpsAgent: new Agent(agentOpts),
    },
  });
}
