// The floor: the least a send endpoint can do, one raw INSERT and one Redis enqueue per request,
// on the same framework (express + JSON body). Our API's rate is reported as a ratio of this.
import express from 'express';
import { Pool } from 'pg';
import { floorSendQueue } from './floor-queue';
import { newId } from '@mailrail/platform/ids';

const port = Number(process.env.PORT ?? 3901);
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) });
const queue = floorSendQueue();
const teamId = Number(process.env.FLOOR_TEAM_ID);

const app = express();
app.use(express.json({ limit: '1mb' }));
app.post('/floor', async (req, res) => {
  const id = newId();
  const b = req.body as { from: string; to: string; subject: string; html?: string; text?: string };
  await pool.query(
    `INSERT INTO "Email" (id, "teamId", "from", "to", subject, html, text, "latestStatus", "updatedAt") VALUES ($1, $2, $3, $4, $5, $6, $7, 'QUEUED', now())`,
    [id, teamId, b.from, [b.to], b.subject, b.html ?? null, b.text ?? null],
  );
  await queue.add('send', { emailId: id }, { jobId: id });
  res.json({ emailId: id });
});
app.listen(port, '127.0.0.1', () => console.log(`floor listening on ${port}`));
