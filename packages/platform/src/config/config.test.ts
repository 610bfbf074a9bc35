import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { ConfigError, loadConfig } from './load';
import { listenPortOf } from './schema';

describe('configuration', () => {
  it('has working localhost defaults for development', () => {
    const c = loadConfig({});
    expect(c.PORT).toBe(3000);
    expect(c.DATABASE_URL).toBe('postgresql://postgres@127.0.0.1:5432/mailrail');
    expect(c.REDIS_URL).toBe('redis://127.0.0.1:6379');
    expect(c.PUBLIC_URL).toBe('http://localhost:3000');
    expect(c.SES_ENDPOINT).toBeUndefined();
    expect(c.sesRegions).toEqual(['us-east-1']);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'http://x'],
    ['PUBLIC_URL', 'not a url'],
    ['SECRET', 'short'],
    ['AWS_REGION', 'mars'],
    ['SES_ENDPOINT', 'nope'],
    ['API_RATE_LIMIT', '-1'],
    ['SES_REGIONS', 'us-east-1,nowhere'],
  ])('refuses %s=%s with a message naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}:`));
  });

  describe('Redis mode (docs/redis.md)', () => {
    it('is one Redis at REDIS_URL by default, without hash tags', () => {
      const c = loadConfig({});
      expect(c.redis).toEqual({ mode: 'standalone', url: 'redis://127.0.0.1:6379' });
      expect(c.redisHashTags).toBe(false);
    });

    it('is a cluster with REDIS_CLUSTER_NODES, with hash tags', () => {
      const c = loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-2.internal:7001,[::1]:7002', REDIS_PASSWORD: 'pw' });
      expect(c.redis).toEqual({
        mode: 'cluster',
        nodes: [
          { host: '10.0.0.1', port: 7000 },
          { host: 'redis-2.internal', port: 7001 },
          { host: '::1', port: 7002 },
        ],
        password: 'pw',
      });
      expect(c.redisHashTags).toBe(true);
    });

    it('is a sentinel-managed master with REDIS_SENTINELS and REDIS_SENTINEL_NAME', () => {
      const c = loadConfig({ REDIS_SENTINELS: '10.0.0.1:26379,10.0.0.2:26379', REDIS_SENTINEL_NAME: 'mymaster' });
      expect(c.redis).toEqual({
        mode: 'sentinel',
        name: 'mymaster',
        sentinels: [
          { host: '10.0.0.1', port: 26379 },
          { host: '10.0.0.2', port: 26379 },
        ],
      });
      expect(c.redisHashTags).toBe(false);
      expect(loadConfig({ REDIS_URL: 'redis://r:6379', REDIS_HASH_TAGS: 'true' }).redisHashTags).toBe(true);
    });

    it.each([
      [{ REDIS_URL: 'redis://r:6379', REDIS_CLUSTER_NODES: 'a:7000' }, /REDIS_URL, REDIS_CLUSTER_NODES: set only one of/],
      [
        { REDIS_CLUSTER_NODES: 'a:7000', REDIS_SENTINELS: 'b:26379', REDIS_SENTINEL_NAME: 'm' },
        /REDIS_CLUSTER_NODES, REDIS_SENTINELS: set only one/,
      ],
      [{ REDIS_SENTINELS: 'b:26379' }, /REDIS_SENTINEL_NAME: required with REDIS_SENTINELS/],
      [{ REDIS_SENTINEL_NAME: 'm' }, /REDIS_SENTINEL_NAME: only with REDIS_SENTINELS/],
      [{ REDIS_CLUSTER_NODES: 'a:7000', REDIS_HASH_TAGS: 'false' }, /REDIS_HASH_TAGS: must not be false with REDIS_CLUSTER_NODES/],
      [{ REDIS_CLUSTER_NODES: 'a:7000,b' }, /REDIS_CLUSTER_NODES: "b" is not host:port/],
      [{ REDIS_SENTINELS: 'b:99999', REDIS_SENTINEL_NAME: 'm' }, /REDIS_SENTINELS: "b:99999" is not host:port/],
      [{ REDIS_PASSWORD: 'pw' }, /REDIS_PASSWORD: only with REDIS_CLUSTER_NODES or REDIS_SENTINELS/],
      [{ REDIS_PREFIX: '{mailrail}' }, /REDIS_PREFIX: letters, digits, _ and - only \(hash tags are added by mailrail/],
    ])('refuses %j with a clear message', (env, message) => {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(message);
    });
  });

  it('names every bad variable at once', () => {
    expect(() => loadConfig({ PORT: 'x', REDIS_URL: 'y' })).toThrow(/PORT:[\s\S]*REDIS_URL:|REDIS_URL:[\s\S]*PORT:/);
  });

  it('refuses the development secret in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/SECRET/);
    expect(loadConfig({ NODE_ENV: 'production', SECRET: STRONG }).NODE_ENV).toBe('production');
  });

  const STRONG = randomBytes(32).toString('hex');
  const WEAK = [
    ['the development default', undefined],
    ['x repeated', 'x'.repeat(40)],
    ['a short piece repeated', 'abcdef12'.repeat(5)],
    ['well-known words', 'changeme-changeme-secret-password-123'],
    ['well-known words, other case', 'ChangeMe_Secret_Password_MailRail_2024'],
  ] as const;

  it.each(WEAK)('refuses a weak SECRET (%s) whenever PUBLIC_URL is not loopback, whatever NODE_ENV says', (_what, secret) => {
    for (const NODE_ENV of [undefined, 'development', 'test', 'production']) {
      for (const PUBLIC_URL of ['https://mail.example.com', 'http://10.0.0.5:3000', 'http://[2001:db8::1]/']) {
        const env = { PUBLIC_URL, ...(NODE_ENV ? { NODE_ENV } : {}), ...(secret ? { SECRET: secret } : {}) };
        expect(() => loadConfig(env)).toThrow(/SECRET: .*openssl rand -hex 32/);
      }
    }
  });

  it.each(['http://localhost:3000', 'http://127.0.0.1:3000', 'http://127.8.9.1', 'http://[::1]:3000', 'http://app.localhost'])(
    'keeps the development default for a loopback PUBLIC_URL (%s)',
    (PUBLIC_URL) => {
      expect(loadConfig({ PUBLIC_URL }).PUBLIC_URL).toBe(PUBLIC_URL);
    },
  );

  it('accepts a random SECRET anywhere (openssl rand -hex 32, or base64)', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://mail.example.com', SECRET: STRONG }).SECRET).toBe(STRONG);
    const b64 = randomBytes(32).toString('base64');
    expect(loadConfig({ PUBLIC_URL: 'https://mail.example.com', NODE_ENV: 'production', SECRET: b64 }).SECRET).toBe(b64);
  });

  it('says what to do at start-up', () => {
    const root = path.resolve(__dirname, '../../../..');
    const res = spawnSync(process.execPath, [path.join(root, 'node_modules/tsx/dist/cli.mjs'), path.join(root, 'apps/api/src/main.ts')], {
      env: {
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'SECRET')),
        PUBLIC_URL: 'https://mail.example.com',
        NODE_ENV: 'development',
      },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(res.status).toBe(1);
    expect(res.stderr).toMatch(/SECRET: is the development default; PUBLIC_URL https:\/\/mail\.example\.com is not a loopback address/);
  });

  it('refuses an SNS message age that outlives the dedupe retention (a replay would be accepted again)', () => {
    expect(loadConfig({}).SNS_MAX_MESSAGE_AGE_SECONDS).toBe(3600);
    expect(() => loadConfig({ SES_NOTIFICATION_RETENTION_DAYS: '1', SNS_MAX_MESSAGE_AGE_SECONDS: '86400' })).toThrow(
      /SNS_MAX_MESSAGE_AGE_SECONDS/,
    );
    expect(loadConfig({ SES_NOTIFICATION_RETENTION_DAYS: '2', SNS_MAX_MESSAGE_AGE_SECONDS: '86400' }).SNS_MAX_MESSAGE_AGE_SECONDS).toBe(
      86400,
    );
  });

  it('listener ports: a number, 0 = off, `any` = one the OS picks (listen(0)); the API port 0 is one the OS picks', () => {
    const c = loadConfig({ PORT: '0', SMTP_PORT: 'any', SMTPS_PORT: '0', SMTP_METRICS_PORT: '9999', WORKER_METRICS_PORT: 'any' });
    expect(c).toMatchObject({ PORT: 0, SMTP_PORT: 'any', SMTPS_PORT: 0, SMTP_METRICS_PORT: 9999, WORKER_METRICS_PORT: 'any' });
    expect([c.SMTP_PORT, c.SMTPS_PORT, c.SMTP_METRICS_PORT].map(listenPortOf)).toEqual([0, null, 9999]);
    for (const [name, value] of [
      ['SMTP_PORT', 'some'],
      ['SMTPS_PORT', '70000'],
      ['WORKER_METRICS_PORT', '-1'],
    ]) {
      expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}:`));
    }
  });

  it('SMTP relay: AUTH in clear text is refused in production, and the certificate and key come together', () => {
    const secret = randomBytes(32).toString('hex');
    expect(() => loadConfig({ NODE_ENV: 'production', SECRET: secret, SMTP_ALLOW_INSECURE_AUTH: 'true' })).toThrow(
      /SMTP_ALLOW_INSECURE_AUTH: must not be true in production/,
    );
    expect(loadConfig({ SMTP_ALLOW_INSECURE_AUTH: 'true' }).SMTP_ALLOW_INSECURE_AUTH).toBe(true);
    expect(() => loadConfig({ SMTP_TLS_CERT: '/tls/cert.pem' })).toThrow(/SMTP_TLS_KEY: SMTP_TLS_CERT and SMTP_TLS_KEY are set together/);
    expect(loadConfig({})).toMatchObject({ SMTP_PORT: 2587, SMTPS_PORT: 2465, SMTP_DEDUPE_MESSAGE_ID: true });
    expect(loadConfig({ SMTP_TLS_CERT: '', SMTP_TLS_KEY: '', SMTP_SERVER_NAME: '' })).toMatchObject({
      SMTP_TLS_CERT: undefined,
      SMTP_SERVER_NAME: undefined,
    });
  });

  it('takes dashboard mail settings both or neither', () => {
    expect(loadConfig({}).DASHBOARD_MAIL_FROM).toBeUndefined();
    expect(() => loadConfig({ DASHBOARD_MAIL_FROM: 'dashboard@example.com' })).toThrow(/DASHBOARD_MAIL_FROM and DASHBOARD_MAIL_TEAM_ID/);
    expect(() => loadConfig({ DASHBOARD_MAIL_TEAM_ID: '3' })).toThrow(/DASHBOARD_MAIL_FROM and DASHBOARD_MAIL_TEAM_ID/);
    expect(loadConfig({ DASHBOARD_MAIL_FROM: 'dashboard@example.com', DASHBOARD_MAIL_TEAM_ID: '3' }).DASHBOARD_MAIL_TEAM_ID).toBe(3);
    expect(loadConfig({ DASHBOARD_MAIL_FROM: '', DASHBOARD_MAIL_TEAM_ID: '' }).DASHBOARD_MAIL_TEAM_ID).toBeUndefined();
  });

  it('an empty SES_ENDPOINT means AWS itself', () => {
    expect(loadConfig({ SES_ENDPOINT: '' }).SES_ENDPOINT).toBeUndefined();
    expect(loadConfig({ SES_ENDPOINT: 'http://127.0.0.1:8005' }).SES_ENDPOINT).toBe('http://127.0.0.1:8005');
  });

  describe('SES_EVENT_SIMULATOR never runs against real SES', () => {
    const LOCAL = 'http://127.0.0.1:8005';
    it.each([
      [{}, false],
      [{ SES_ENDPOINT: LOCAL }, true],
      [{ SES_ENDPOINT: 'http://localhost:8005' }, true],
      [{ SES_ENDPOINT: 'http://[::1]:8005' }, true],
      [{ SES_ENDPOINT: 'http://ses-local:8005' }, false],
      [{ SES_ENDPOINT: 'https://email.us-east-1.amazonaws.com' }, false],
      [{ SES_ENDPOINT: 'http://127.0.0.1.nip.io:8005' }, false],
      [{ SES_ENDPOINT: LOCAL, NODE_ENV: 'test' }, false],
      [{ SES_ENDPOINT: LOCAL, NODE_ENV: 'production', SECRET: STRONG }, false],
      [{ SES_ENDPOINT: LOCAL, SES_EVENT_SIMULATOR: 'off' }, false],
      [{ SES_ENDPOINT: LOCAL, NODE_ENV: 'test', SES_EVENT_SIMULATOR: 'on' }, true],
    ])('%j → %s', (env, on) => {
      expect(loadConfig(env as NodeJS.ProcessEnv).sesEventSimulator).toBe(on);
    });

    it('refuses on without SES_ENDPOINT, naming the AWS credentials it would send with', () => {
      expect(() => loadConfig({ SES_EVENT_SIMULATOR: 'on', AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE' })).toThrow(
        /SES_EVENT_SIMULATOR: on needs SES_ENDPOINT set to the local SES emulator .*real SES \(AWS credentials found in AWS_ACCESS_KEY_ID\)/,
      );
      expect(() => loadConfig({ SES_EVENT_SIMULATOR: 'on', SES_ENDPOINT: '' })).toThrow(ConfigError);
    });

    it('refuses on with a SES_ENDPOINT that is not loopback, and in production', () => {
      expect(() => loadConfig({ SES_EVENT_SIMULATOR: 'on', SES_ENDPOINT: 'https://email.eu-west-1.amazonaws.com' })).toThrow(
        /SES_EVENT_SIMULATOR: on needs SES_ENDPOINT on a loopback address .*not email\.eu-west-1\.amazonaws\.com/,
      );
      expect(() =>
        loadConfig({ SES_EVENT_SIMULATOR: 'on', SES_ENDPOINT: 'http://127.0.0.1:8005', NODE_ENV: 'production', SECRET: STRONG }),
      ).toThrow(/SES_EVENT_SIMULATOR: must not be on in production/);
    });
  });

  it.each(['api', 'worker'])('the %s process refuses to start with the simulator on, AWS credentials and no SES_ENDPOINT', (app) => {
    const root = path.resolve(__dirname, '../../../..');
    const res = spawnSync(
      process.execPath,
      [path.join(root, 'node_modules/tsx/dist/cli.mjs'), path.join(root, `apps/${app}/src/main.ts`)],
      {
        env: {
          ...process.env,
          SES_EVENT_SIMULATOR: 'on',
          SES_ENDPOINT: '',
          AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
          AWS_SECRET_ACCESS_KEY: 'x',
          NODE_ENV: 'development',
        },
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    expect(res.status).toBe(1);
    expect(res.stderr).toContain('SES_EVENT_SIMULATOR: on needs SES_ENDPOINT set to the local SES emulator');
    expect(res.stderr).toContain('AWS credentials found in AWS_ACCESS_KEY_ID');
  });

  it.each(['api', 'worker'])('the %s process exits with status 1 and names the bad variable at start-up', (app) => {
    const root = path.resolve(__dirname, '../../../..');
    const res = spawnSync(
      process.execPath,
      [path.join(root, 'node_modules/tsx/dist/cli.mjs'), path.join(root, `apps/${app}/src/main.ts`)],
      {
        env: { ...process.env, PORT: 'not-a-port', REDIS_URL: 'nope' },
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    expect(res.status).toBe(1);
    expect(res.stderr).toContain('Invalid configuration');
    expect(res.stderr).toMatch(/PORT: /);
    expect(res.stderr).toMatch(/REDIS_URL: must be a redis:\/\/ URL/);
    expect(res.stderr).not.toMatch(/at .*\.ts:\d+/);
  });
});
