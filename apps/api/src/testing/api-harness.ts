import {
  createApiKey,
  createTeam,
  insertDomain,
  type Config,
  type Permission,
} from '@mailrail/core';
import { createTestDatabase, dropDatabase } from '@mailrail/core/testing/databases';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/core/testing/redis';
import { testConfig } from '@mailrail/core/testing/config';
import { createApp } from '../app';
import { closeApiDeps, createApiDeps, type ApiDeps } from '../deps';

export interface TestTeam {
  teamId: number;
  apiKey: string;
  auth: { Authorization: string };
}

export interface TestApi {
  app: ReturnType<typeof createApp>['app'];
  deps: ApiDeps;
  config: Config;
  team: TestTeam;
  newTeam(name?: string): Promise<TestTeam>;
  newKey(teamId: number, opts?: { permission?: Permission; domainId?: number }): Promise<string>;
  addDomain(teamId: number, name: string, opts?: { verified?: boolean; region?: string }): Promise<{ id: number; name: string }>;
  close(): Promise<void>;
}

/** A real API on the test file's own database and Redis prefix, with one team and a FULL key. */
export async function startTestApi(env: Record<string, string> = {}): Promise<TestApi> {
  const databaseUrl = await createTestDatabase();
  const prefix = testRedisPrefix();
  const config = testConfig(databaseUrl, prefix, env);
  const deps = createApiDeps(config);
  const { app, close } = createApp(deps);

  const newKey: TestApi['newKey'] = async (teamId, opts = {}) =>
    (await createApiKey(deps.db, { teamId, permission: opts.permission ?? 'FULL', domainId: opts.domainId })).apiKey;
  const newTeam: TestApi['newTeam'] = async (name = 'Test team') => {
    const t = await createTeam(deps.db, name);
    const apiKey = await newKey(t.id);
    return { teamId: t.id, apiKey, auth: { Authorization: `Bearer ${apiKey}` } };
  };

  return {
    app,
    deps,
    config,
    team: await newTeam(),
    newTeam,
    newKey,
    addDomain: (teamId, name, opts = {}) =>
      insertDomain(deps.db, config.SECRET, {
        teamId,
        name,
        region: opts.region ?? config.AWS_REGION,
        dkimSelector: config.DKIM_SELECTOR,
        verified: opts.verified ?? true,
      }),
    close: async () => {
      close();
      await deleteRedisPrefix(deps.redis, prefix).catch(() => undefined);
      await closeApiDeps(deps);
      await dropDatabase(databaseUrl);
    },
  };
}
