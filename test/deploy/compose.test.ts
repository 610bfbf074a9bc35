import { readFileSync } from 'node:fs';
import path from 'node:path';

// docker-compose.yml is kept correct by reading (no Docker on build machines): pin what matters.
const compose = readFileSync(path.resolve(__dirname, '../../docker-compose.yml'), 'utf8');

/** "service -> published port mappings", from each service's `ports: [...]` line. */
function publishedPorts(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  let service = '';
  for (const line of compose.split('\n')) {
    const name = /^ {2}([\w-]+):\s*$/.exec(line);
    if (name) service = name[1];
    const ports = /^\s+ports:\s*\[(.*)\]/.exec(line);
    if (ports) out[service] = ports[1].split(',').map((p) => p.trim().replace(/^"|"$/g, ''));
  }
  return out;
}

it('publishes only the API and the SMTP relay on all interfaces; dev-only ports (the SES emulator page) on loopback', () => {
  const ports = publishedPorts();
  expect(ports.api).toEqual(['3000:3000']);
  expect(ports.smtp).toEqual(['2587:2587', '2465:2465']);
  expect(ports['ses-local']).toEqual(['127.0.0.1:8005:8005']);
  for (const [service, mappings] of Object.entries(ports)) {
    if (service === 'api' || service === 'smtp') continue;
    for (const m of mappings) expect([service, m.startsWith('127.0.0.1:')]).toEqual([service, true]);
  }
});

it('requires SECRET from the operator (the README passes SECRET=$(openssl rand -hex 32))', () => {
  expect(compose).toMatch(/SECRET: \$\{SECRET:\?/);
});

it('runs the SMTP relay compiled, with certificate files from a mounted directory and the app environment', () => {
  const smtp = compose.slice(compose.indexOf('\n  smtp:\n'), compose.indexOf('\nvolumes:\n'));
  expect(smtp).toContain('"dist/smtp/main.js"]'); // its young-generation flag: node-flags.test.ts
  expect(smtp).toContain('<<: *app-env');
  expect(smtp).toMatch(/SMTP_TLS_CERT: \$\{SMTP_TLS_CERT:-\}/);
  expect(smtp).toMatch(/SMTP_TLS_SELF_SIGNED: \$\{SMTP_TLS_SELF_SIGNED:-false\}/);
  expect(smtp).toContain(':/tls:ro');
});
