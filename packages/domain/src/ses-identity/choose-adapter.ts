import { awsCredentialsSource } from '@mailrail/platform/config/aws-credentials';
import type { Config } from '@mailrail/platform/config/schema';
import type { Db } from '@mailrail/platform/db/client';
import { createDnsLookup, type DnsLookup } from '../domains/dns-lookup';
import { createLocalIdentityPort } from './local-adapter';
import type { IdentityPort } from './port';
import { createSesIdentityPort } from './ses-adapter';

type AdapterConfig = Pick<Config, 'SES_IDENTITY_ADAPTER' | 'SES_ENDPOINT' | 'DNS_RESOLVER' | 'DNS_TIMEOUT_MS'>;

/** `auto` is local when SES_ENDPOINT points at an emulator or no AWS credentials are configured. */
export function identityAdapterKind(config: AdapterConfig, env: NodeJS.ProcessEnv = process.env): 'ses' | 'local' {
  if (config.SES_IDENTITY_ADAPTER !== 'auto') return config.SES_IDENTITY_ADAPTER;
  if (config.SES_ENDPOINT) return 'local';
  return awsCredentialsSource(env) ? 'ses' : 'local';
}

/** The one place where the identity adapter is chosen. */
export function createIdentityPort(
  config: AdapterConfig,
  deps: { db: Db; dns?: DnsLookup },
  env: NodeJS.ProcessEnv = process.env,
): IdentityPort {
  if (identityAdapterKind(config, env) === 'ses') return createSesIdentityPort({ endpoint: config.SES_ENDPOINT });
  return createLocalIdentityPort(deps.db, deps.dns ?? createDnsLookup(config.DNS_RESOLVER, config.DNS_TIMEOUT_MS));
}
