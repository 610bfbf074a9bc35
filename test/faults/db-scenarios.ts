// 4. PostgreSQL connections cut while the API takes sends: every answer is either a 200 whose
// email is stored, or a 503 with the standard error body (or a dropped connection) whose email is
// not stored; the worker recovers and sends everything stored; no email lacks its first event.
import { Client } from 'pg';
import { testServerUrl } from '@mailrail/testing/databases';
import { lossAndDuplicates, sleep, startStack, type ScenarioResult } from './stack';

const MIN_CUTS = 3;

export async function postgresConnectionsCut(requests = Number(process.env.FAULTS_DB_REQUESTS ?? 600)): Promise<ScenarioResult> {
  const stack = await startStack('s4');
  const admin = new Client({ connectionString: `${testServerUrl}/postgres` });
  await admin.connect();
  try {
    await stack.startApi();
    await stack.startWorker();
    const ok: string[] = [];
    let unavailable = 0;
    let connectionErrors = 0;
    const unexpected: string[] = [];
    let next = 0;
    let sent = 0;
    let cuts = 0;
    let terminated = 0;
    // At least `requests`, and on until the third cut: a fast machine answered 600 sends before the
    // second cut, and the scenario then proved nothing about the third. The cap only stops a run
    // whose cutter stalled; the assertion on `cuts` then fails it.
    const send = async () => {
      for (;;) {
        const i = next++;
        if (i >= requests && (cuts >= MIN_CUTS || i >= requests * 20)) return;
        sent++;
        try {
          const res = await fetch(`${stack.apiUrl}/api/v1/emails`, {
            method: 'POST',
            headers: { ...stack.team.auth, 'Content-Type': 'application/json' },
            body: JSON.stringify({
              from: `Shop <orders@${stack.team.domain.name}>`,
              to: `cut${i}@example.org`,
              subject: `Cut ${i}`,
              text: 'hello',
            }),
          });
          const body = (await res.json().catch(() => null)) as { emailId?: string; error?: { code?: string; message?: string } } | null;
          if (res.status === 200 && body?.emailId) ok.push(body.emailId);
          else if (res.status === 503 && body?.error?.code === 'SERVICE_UNAVAILABLE' && typeof body.error.message === 'string')
            unavailable++;
          else unexpected.push(`${res.status} ${JSON.stringify(body).slice(0, 200)}`);
        } catch {
          connectionErrors++;
        }
      }
    };
    let sending = true;
    const cutter = (async () => {
      await sleep(300);
      while (sending) {
        const r = await admin.query(
          'SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()) t',
          [stack.databaseName],
        );
        cuts++;
        terminated += r.rows[0].n;
        await sleep(700);
      }
    })();
    await Promise.all(Array.from({ length: 10 }, send));
    sending = false;
    await cutter;

    const stored = await retry(() => stack.db.email.findMany({ select: { id: true } }));
    const storedIds = new Set(stored.map((e) => e.id));
    const missing200 = ok.filter((id) => !storedIds.has(id)).length;
    const storedWithout200 = stored.length - ok.filter((id) => storedIds.has(id)).length;
    const withoutEvent = await retry(() => stack.db.email.count({ where: { emailEvents: { none: {} } } }));
    const done = await stack.waitUntilDelivered([...storedIds], 180_000);
    await sleep(6000);
    const { lost, duplicates } = lossAndDuplicates([...storedIds], stack.sesCountsByEmailId());
    const pass =
      done &&
      unexpected.length === 0 &&
      missing200 === 0 &&
      storedWithout200 === 0 &&
      withoutEvent === 0 &&
      lost === 0 &&
      duplicates === 0 &&
      cuts >= MIN_CUTS;
    return {
      pass,
      figures:
        `requests=${sent} cuts=${cuts} backends_terminated=${terminated} ok_200=${ok.length} unavailable_503=${unavailable} connection_errors=${connectionErrors} unexpected=${unexpected.length}` +
        `${unexpected.length ? ` first_unexpected=${JSON.stringify(unexpected[0])}` : ''} ok_not_stored=${missing200} stored_without_200=${storedWithout200} emails_without_event=${withoutEvent} lost=${lost} duplicates=${duplicates}`,
    };
  } finally {
    await admin.end().catch(() => undefined);
    await stack.close();
  }
}

/** The runner's own connections are cut too: try again once the pool reconnects. */
async function retry<T>(fn: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= 10) throw err;
      await sleep(300);
    }
  }
}
