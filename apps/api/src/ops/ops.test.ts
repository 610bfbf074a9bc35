import request from 'supertest';
import { startTestApi, type TestApi } from '../testing/api-harness';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ METRICS_TOKEN: 'metrics-secret', ADMIN_TOKEN: 'admin-secret' });
});
afterAll(async () => {
  await api.close();
});

describe('GET /metrics', () => {
  it('needs the metrics token when one is configured', async () => {
    expect((await request(api.app).get('/metrics')).status).toBe(401);
    expect((await request(api.app).get('/metrics').set('Authorization', 'Bearer wrong')).status).toBe(401);
  });

  it('exposes request counts and latencies by route pattern, queue depths and process metrics', async () => {
    await request(api.app).get('/api/v1/emails').set(api.team.auth).expect(200);
    await request(api.app).get('/api/v1/emails?limit=0').set(api.team.auth).expect(400);
    const res = await request(api.app).get('/metrics').set('Authorization', 'Bearer metrics-secret');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/plain/);
    expect(res.text).toMatch(/mailrail_http_requests_total\{method="GET",route="\/api\/v1\/emails",status="200",process="api"\} 1/);
    expect(res.text).toMatch(/mailrail_http_requests_total\{method="GET",route="\/api\/v1\/emails",status="400",process="api"\} 1/);
    expect(res.text).toMatch(/mailrail_http_request_duration_seconds_count\{process="api",method="GET",route="\/api\/v1\/emails",status="200"\} 1/);
    expect(res.text).toMatch(/mailrail_queue_jobs\{queue="send-transactional-us-east-1",state="waiting",process="api"\} 0/);
    expect(res.text).toContain('mailrail_process_resident_memory_bytes');
    for (const series of ['mailrail_job_duration_seconds', 'mailrail_emails_total', 'mailrail_ses_errors_total', 'mailrail_rate_limit_waits_total']) {
      expect(res.text).toContain(`# TYPE ${series}`);
    }
  });
});

describe('queue dashboard', () => {
  it('is closed without the admin token', async () => {
    const res = await request(api.app).get('/admin/queues');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
  });

  it('opens with the token and lists the queues', async () => {
    const page = await request(api.app).get('/admin/queues').set('Authorization', 'Bearer admin-secret');
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<html/i);
    const queues = await request(api.app).get('/admin/queues/api/queues').set('Authorization', 'Bearer admin-secret');
    expect(queues.status).toBe(200);
    expect(JSON.stringify(queues.body)).toContain('send-transactional-us-east-1');
  });

  it('accepts the token once in the query and then by cookie', async () => {
    const first = await request(api.app).get('/admin/queues?token=admin-secret');
    expect(first.status).toBe(200);
    const cookie = first.headers['set-cookie'];
    expect(String(cookie)).toMatch(/mailrail_admin=admin-secret; Path=\/admin\/queues; HttpOnly; SameSite=Strict/);
    expect((await request(api.app).get('/admin/queues/api/queues').set('Cookie', String(cookie).split(';')[0])).status).toBe(200);
  });
});
