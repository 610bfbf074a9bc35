import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { useTestDatabase } from '@mailrail/testing/databases';
import { hashKeySecret, parseApiKey } from '@mailrail/domain/teams/api-keys';
import { hashSecretToken } from '@mailrail/domain/users/link-tokens';
import { runCli } from './main';

const database = useTestDatabase();

async function cli(...argv: string[]): Promise<{ code: number; out: unknown; err: string }> {
  let stdout = '';
  let stderr = '';
  const out = jest.spyOn(process.stdout, 'write').mockImplementation((s) => ((stdout += String(s)), true));
  const err = jest.spyOn(process.stderr, 'write').mockImplementation((s) => ((stderr += String(s)), true));
  try {
    const code = await runCli(argv, { DATABASE_URL: database.url, LOG_LEVEL: 'silent' });
    return { code, out: stdout ? JSON.parse(stdout) : null, err: stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

describe('admin CLI', () => {
  it('creates a dashboard user in a team and prints a one-time sign-in link whose token is stored only as a hash', async () => {
    const team = (await cli('team', 'create', '--name', 'Users')).out as { teamId: number };
    const { code, out } = await cli('user', 'create', '--email', ' Ada@Example.ORG ', '--team', String(team.teamId));
    expect(code).toBe(0);
    const created = out as { userId: number; email: string; role: string; created: boolean; signInLink: string };
    expect(created).toMatchObject({ email: 'ada@example.org', role: 'ADMIN', created: true });
    expect(created.signInLink).toMatch(/^http:\/\/localhost:3000\/sign-in\/link#token=[\w-]{43}$/);
    const token = created.signInLink.split('#token=')[1];
    const tokens = await database.db.userToken.findMany({ where: { userId: created.userId } });
    expect(tokens).toHaveLength(1);
    expect(tokens[0]).toMatchObject({ purpose: 'SIGN_IN', tokenHash: hashSecretToken(token), usedAt: null });
    expect(JSON.stringify(tokens)).not.toContain(token);
    expect(await database.db.membership.findMany({ where: { userId: created.userId } })).toEqual([
      expect.objectContaining({ teamId: team.teamId, role: 'ADMIN' }),
    ]);

    // Again for the same address: the same user, a new link, the role given.
    const again = (await cli('user', 'create', '--email', 'ada@example.org', '--team', String(team.teamId), '--role', 'member')).out as {
      userId: number;
      created: boolean;
    };
    expect(again).toMatchObject({ userId: created.userId, created: false });
    expect(await database.db.membership.findFirst({ where: { userId: created.userId } })).toMatchObject({ role: 'MEMBER' });
  });

  it.each([
    [['user', 'create', '--email', 'not-an-address', '--team', '1']],
    [['user', 'create', '--email', 'a@example.org', '--team', '1', '--role', 'OWNER']],
    [['user', 'create', '--email', 'a@example.org', '--team', '99999']],
    [['user', 'create', '--team', '1']],
  ])('refuses bad user arguments with status 2: %j', async (argv) => {
    const { code, err } = await cli(...argv);
    expect(code).toBe(2);
    expect(err).toMatch(/error: /);
  });

  it('creates a team with a FULL key whose secret is stored only as a hash', async () => {
    const { code, out } = await cli('team', 'create', '--name', 'Acme');
    expect(code).toBe(0);
    const { teamId, apiKey } = out as { teamId: number; apiKey: string };
    expect(apiKey).toMatch(/^us_[0-9a-z]{10}_[0-9a-f]{32}$/);
    const parsed = parseApiKey(apiKey)!;
    const row = await database.db.apiKey.findUniqueOrThrow({ where: { clientId: parsed.clientId } });
    expect(row).toMatchObject({ teamId, permission: 'FULL', tokenHash: hashKeySecret(parsed.secret) });
    expect(JSON.stringify(row)).not.toContain(parsed.secret);
  });

  it('adds a verified domain and a SENDING key bound to it, then revokes the key', async () => {
    const team = (await cli('team', 'create', '--name', 'B')).out as { teamId: number };
    const domain = (await cli('domain', 'add', '--team', String(team.teamId), '--name', 'Mail.Example.com', '--verified')).out as Record<
      string,
      unknown
    >;
    expect(domain).toMatchObject({ name: 'mail.example.com', status: 'SUCCESS', teamId: team.teamId, region: 'us-east-1' });
    expect(domain).not.toHaveProperty('dkimPrivateKeyEnc');
    const key = await cli(
      'apikey',
      'create',
      '--team',
      String(team.teamId),
      '--permission',
      'SENDING',
      '--domain',
      String(domain.id),
      '--name',
      'ci',
    );
    expect(key.code).toBe(0);
    const { clientId } = parseApiKey((key.out as { apiKey: string }).apiKey)!;
    expect(await database.db.apiKey.findUniqueOrThrow({ where: { clientId } })).toMatchObject({
      permission: 'SENDING',
      domainId: domain.id,
      name: 'ci',
    });
    const revoked = await cli('apikey', 'revoke', '--key', `us_${clientId}`);
    expect(revoked).toMatchObject({ code: 0, out: { revoked: true, clientId } });
    expect((await database.db.apiKey.findUniqueOrThrow({ where: { clientId } })).revokedAt).not.toBeNull();
    expect((await cli('apikey', 'revoke', '--key', `us_${clientId}`)).code).toBe(2);
  });

  it.each([
    [['team', 'create']],
    [['apikey', 'create', '--team', 'abc']],
    [['apikey', 'create', '--team', '1', '--permission', 'ADMIN']],
    [['apikey', 'create', '--team', '99999']],
    [['domain', 'add', '--team', '1', '--name', 'not a domain']],
    [['domain', 'add', '--team', '1', '--name', 'ok.example.com', '--region', 'mars-1']],
    [['team', 'create', '--name', 'x', '--bogus']],
    [['nothing', 'here']],
  ])('refuses bad arguments %j with a message and exit code 2', async (argv) => {
    const res = await cli(...argv);
    expect(res.code).toBe(2);
    expect(res.out).toBeNull();
    expect(res.err.length).toBeGreaterThan(10);
  });

  it('exits the process with 2 on bad arguments', () => {
    const root = path.resolve(__dirname, '../../../..');
    const res = spawnSync(
      process.execPath,
      [path.join(root, 'node_modules/tsx/dist/cli.mjs'), path.join(__dirname, 'main.ts'), 'apikey', 'create'],
      {
        env: { ...process.env, DATABASE_URL: database.url },
        encoding: 'utf8',
      },
    );
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/missing --team/);
  });
});
