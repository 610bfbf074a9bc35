import { createApiKey, createTeam, type Permission } from '@mailrail/domain/teams/api-keys';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { type Config } from '@mailrail/platform/config/schema';
import { createTestDatabase, dropDatabase } from '@mailrail/testing/databases';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/testing/redis';
import { testConfig } from '@mailrail/testing/config';
import { createApp } from '../app';
import { closeApiDeps, createApiDeps, type ApiDeps } from '../deps';
import { checkedAgainstDocument, responseContract } from './response-contract';

// Every response of a harness app is checked against the OpenAPI document (response-contract.ts);
// a test during which one did not conform fails, naming the route, status and mismatch.
const contractViolations: string[] = [];
function failOnContractViolations() {
  const found = contractViolations.splice(0);
  if (found.length > 0) throw new Error(`Responses that disagree with the OpenAPI document:\n- ${found.join('\n- ')}`);
}
if (typeof afterEach === 'function') {
  afterEach(failOnContractViolations);
  afterAll(failOnContractViolations);
}

export interface TestTeam {
  teamId: number;
  apiKey: string;
  auth: { Authorization: string };
}

export interface TestApi {
  app: ReturnType<typeof createApp>['app'];
  /** The express app behind `app` (everything but the accept lane), to read its route table. */
  expressApp: ReturnType<typeof createApp>['expressApp'];
  deps: ApiDeps;
  config: Config;
  team: TestTeam;
  newTeam(name?: string): Promise<TestTeam>;
  newKey(teamId: number, opts?: { permission?: Permission; domainId?: number }): Promise<string>;
  addDomain(teamId: number, name: string, opts?: { verified?: boolean; region?: string }): Promise<{ id: number; name: string }>;
  close(): Promise<void>;
}

/**
 * A real API on the test file's own database and Redis prefix, with one team and a FULL key.
 * `shared` puts it on another harness's database and prefix (a worker test driving the real API);
 * that harness owns them, so close() leaves them. `overrides` replace deps (e.g. a logger whose
 * lines a test reads).
 */
export async function startTestApi(
  env: Record<string, string> = {},
  shared?: { databaseUrl: string; redisPrefix: string },
  overrides: Partial<ApiDeps> = {},
): Promise<TestApi> {
  const databaseUrl = shared?.databaseUrl ?? (await createTestDatabase());
  const prefix = shared?.redisPrefix ?? testRedisPrefix();
  const config = testConfig(databaseUrl, prefix, env);
  const deps = createApiDeps(config, overrides);
  const { app, expressApp, close, drain } = createApp(deps);
  const contract = await responseContract();

  const newKey: TestApi['newKey'] = async (teamId, opts = {}) =>
    (await createApiKey(deps.db, { teamId, permission: opts.permission ?? 'FULL', domainId: opts.domainId })).apiKey;
  const newTeam: TestApi['newTeam'] = async (name = 'Test team') => {
    const t = await createTeam(deps.db, name);
    const apiKey = await newKey(t.id);
    return { teamId: t.id, apiKey, auth: { Authorization: `Bearer ${apiKey}` } };
  };

  return {
    app: checkedAgainstDocument(app, contract, (problem) => contractViolations.push(problem)),
    expressApp,
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
      await drain();
      if (!shared) await deleteRedisPrefix(deps.redis, prefix).catch(() => undefined);
      await closeApiDeps(deps);
      if (!shared) await dropDatabase(databaseUrl);
    },
  };
}
