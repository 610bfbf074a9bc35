import { closeBaseDeps, createBaseDeps, type BaseDeps } from '@mailrail/platform/process/base-deps';
import { type Config } from '@mailrail/platform/config/schema';

/** Everything a request handler may touch; built once per process (or per test file). */
export type ApiDeps = BaseDeps;

export function createApiDeps(config: Config, overrides: Partial<ApiDeps> = {}): ApiDeps {
  return createBaseDeps(config, overrides, { service: 'mailrail-api' });
}

export async function closeApiDeps(deps: ApiDeps): Promise<void> {
  await closeBaseDeps(deps);
}
