// The plain floor (issue 21, section 4): the least a send endpoint can do without a framework.
// node:http, JSON.parse, then per request either one INSERT through a pg Pool and one BullMQ `add`
// (POST /floor, one email), or one multi-row INSERT and one `addBulk` (POST /floor/batch, an array).
// No auth, no validation, no logging: the API's rates are reported as ratios of these.
import http from 'node:http';
import { Pool } from 'pg';
import { floorSendQueue } from './floor-queue';
import { newId } from '@mailrail/platform/ids';

interface Payload {
  from: string;
  to: string;
  subject: string;
  html?: string;
  text?: string;
}

const port = Number(process.env.PORT ?? 3902);
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) });
const queue = floorSendQueue();
const teamId = Number(process.env.FLOOR_TEAM_ID);
const COLUMNS = `(id, "teamId", "from", "to", subject, html, text, "latestStatus", "updatedAt")`;

async function insert(emails: Payload[]): Promise<string[]> {
  const ids = emails.map(() => newId());
  const params: unknown[] = [];
  const rows = emails.map((b, i) => {
    const n = params.push(ids[i], teamId, b.from, [b.to], b.subject, b.html ?? null, b.text ?? null);
    return `($${n - 6}, $${n - 5}, $${n - 4}, $${n - 3}, $${n - 2}, $${n - 1}, $${n}, 'QUEUED', now())`;
  });
  await pool.query(`INSERT INTO "Email" ${COLUMNS} VALUES ${rows.join(', ')}`, params);
  return ids;
}

async function handle(url: string | undefined, body: string): Promise<unknown> {
  if (url === '/floor') {
    const [id] = await insert([JSON.parse(body) as Payload]);
    await queue.add('send', { emailId: id }, { jobId: id });
    return { emailId: id };
  }
  if (url === '/floor/batch') {
    const ids = await insert(JSON.parse(body) as Payload[]);
    await queue.addBulk(ids.map((id) => ({ name: 'send', data: { emailId: id }, opts: { jobId: id } })));
    return { data: ids.map((emailId) => ({ emailId })) };
  }
  return undefined;
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    handle(req.url, Buffer.concat(chunks).toString('utf8')).then(
      (out) => {
        const text = out === undefined ? '{"error":"not found"}' : JSON.stringify(out);
        res.writeHead(out === undefined ? 404 : 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      },
      (err: unknown) => {
        console.error(err);
        res.writeHead(500).end();
      },
    );
  });
});
server.listen(port, '127.0.0.1', () => console.log(`plain floor listening on ${port}`));
// A normal exit on SIGTERM, so that --cpu-prof (run.ts --profile) writes its profile.
process.on('SIGTERM', () => process.exit(0));
