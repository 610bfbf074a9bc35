import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ConfigError, loadConfig } from './load';

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

  it('names every bad variable at once', () => {
    expect(() => loadConfig({ PORT: 'x', REDIS_URL: 'y' })).toThrow(/PORT:[\s\S]*REDIS_URL:|REDIS_URL:[\s\S]*PORT:/);
  });

  it('refuses the development secret in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/SECRET/);
    expect(loadConfig({ NODE_ENV: 'production', SECRET: 'x'.repeat(40) }).NODE_ENV).toBe('production');
  });

  it('an empty SES_ENDPOINT means AWS itself', () => {
    expect(loadConfig({ SES_ENDPOINT: '' }).SES_ENDPOINT).toBeUndefined();
    expect(loadConfig({ SES_ENDPOINT: 'http://127.0.0.1:8005' }).SES_ENDPOINT).toBe('http://127.0.0.1:8005');
  });

  it.each(['api', 'worker'])('the %s process exits with status 1 and names the bad variable at start-up', (app) => {
    const root = path.resolve(__dirname, '../../../..');
    const res = spawnSync(process.execPath, [path.join(root, 'node_modules/tsx/dist/cli.mjs'), path.join(root, `apps/${app}/src/main.ts`)], {
      env: { ...process.env, PORT: 'not-a-port', REDIS_URL: 'nope' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(res.status).toBe(1);
    expect(res.stderr).toContain('Invalid configuration');
    expect(res.stderr).toMatch(/PORT: /);
    expect(res.stderr).toMatch(/REDIS_URL: must be a redis:\/\/ URL/);
    expect(res.stderr).not.toMatch(/at .*\.ts:\d+/);
  });
});
