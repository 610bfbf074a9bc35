import path from 'node:path';
import { createApiKey, createTeam } from '@mailrail/domain/teams/api-keys';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { useTestDatabase } from '@mailrail/testing/databases';
import { testRedisPrefix } from '@mailrail/testing/redis';
import { portIn, withListening, type ListeningChild } from '@mailrail/testing/spawn-listening';
import { waitFor } from '@mailrail/testing/wait-for';

// SIGTERM during a burst of sends: every request is either answered 200 with its email stored,
// or refused before any work (connection refused or reset) with nothing stored. The real API
// process is started, as an operator runs it.

const root = path.resolve(__dirname, '../../..');
const database = useTestDatabase();

it('loses no request when stopped with SIGTERM mid-burst', async () => {
  const team = await createTeam(database.db, 'shutdown');
  await insertDomain(database.db, 'x'.repeat(40), {
    teamId: team.id,
    name: 'shutdown.example.com',
    region: 'us-east-1',
    dkimSelector: 'usesend',
    verified: true,
  });
  const { apiKey } = await createApiKey(database.db, { teamId: team.id });
  // `node --import tsx` rather than the tsx CLI: the signal must reach the API process itself.
  // PORT=0: the API binds a port of its own and says which in its "listening" line.
  const api = {
    command: process.execPath,
    args: ['--import', 'tsx', path.join(root, 'apps/api/src/main.ts')],
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      REDIS_PREFIX: testRedisPrefix(),
      LOG_LEVEL: 'warn',
      API_RATE_LIMIT: '0',
      SECRET: 'x'.repeat(40),
    },
    message: 'mailrail API listening',
  };
  await withListening(api, (child) => burstThenSigterm(child, apiKey, team.id));
}, 120_000);

async function burstThenSigterm(api: ListeningChild, apiKey: string, teamId: number) {
  const child = api.child;
  const base = `http://127.0.0.1:${portIn(api.listening, 'port')}`;
  await waitFor(async () => (await fetch(`${base}/health`).catch(() => null))?.ok, { timeoutMs: 60_000, what: 'the API to be healthy' });

  const answered = new Map<string, string>(); // subject -> emailId
  const refused: string[] = [];
  const other: string[] = [];
  let n = 0;
  let stop = false;
  const loop = async () => {
    while (!stop) {
      const subject = `burst-${n++}`;
      try {
        const res = await fetch(`${base}/api/v1/emails`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ from: 'a@shutdown.example.com', to: 'b@example.org', subject, text: 'x' }),
        });
        const body = (await res.json()) as { emailId: string };
        if (res.status === 200) answered.set(subject, body.emailId);
        else other.push(`${res.status} ${JSON.stringify(body)}`);
      } catch {
        refused.push(subject);
        await new Promise((r) => setTimeout(r, 20));
        if (child.exitCode !== null) stop = true;
      }
    }
  };
  const loops = Array.from({ length: 20 }, loop);
  // Stop once the burst is in full swing. The first requests also warm the process up (lazy
  // modules, the SQL pools), which on a loaded CI machine can take several seconds.
  for (let i = 0; answered.size < 50 && i < 600; i++) await new Promise((r) => setTimeout(r, 50));
  const answeredBeforeStop = answered.size;
  child.kill('SIGTERM');
  const exitCode = await api.exited;
  stop = true;
  await Promise.all(loops);

  const rows = await database.db.email.findMany({ where: { teamId }, select: { id: true, subject: true } });
  const stored = new Map(rows.map((r) => [r.subject, r.id]));
  // One assertion over every fact, so a failure on CI shows the whole picture at once.
  expect({
    exitCode,
    burstUnderWay: answeredBeforeStop >= 10,
    other: other.slice(0, 3),
    // Every 200 is stored under the id it answered, and nothing is stored that was not answered.
    answeredNotStored: [...answered].filter(([s, id]) => stored.get(s) !== id).slice(0, 3),
    storedNotAnswered: [...stored].filter(([s]) => !answered.has(s)).slice(0, 3),
  }).toEqual({ exitCode: 0, burstUnderWay: true, other: [], answeredNotStored: [], storedNotAnswered: [] });
}
