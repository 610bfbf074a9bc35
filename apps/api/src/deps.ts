import { closeBaseDeps, createBaseDeps, type BaseDeps, type Config } from '@mailrail/core';

/** Everything a request handler may touch; built once per process (or per test file). */
export type ApiDeps = BaseDeps;

export function createApiDeps(config: Config, overrides: Partial<ApiDeps> = {}): ApiDeps {
  return createBaseDeps(config, overrides, { service: 'mailrail-api' });
}

export async function closeApiDeps(deps: ApiDeps): Promise<void> {
  await closeBaseDeps(deps);
}
