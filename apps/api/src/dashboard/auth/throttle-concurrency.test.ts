import { createRequire } from 'node:module';
import type * as Argon2 from '@node-rs/argon2';
import { waitFor } from '@mailrail/testing/wait-for';
import { deleteRedisPrefix } from '@mailrail/testing/redis';
import { startTestApi, type TestApi } from '../../testing/api-harness';
import { addUser, browser, PASSWORD, signIn } from '../testing';

// Limits count before the work they limit: however many wrong passwords arrive at once, at most
// the limit's number are verified, and the right one sent after the limit was reached is refused.
// Every argon2 verification is counted and held at a gate until the whole burst has either reached
// one or been answered, so the burst is truly concurrent whatever the machine's speed.

const MAX_PER_ACCOUNT = 3;
const MAX_PER_IP = 8;
const BURST = 200;

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({
    DASHBOARD_LOGIN_FAILURES_PER_ACCOUNT: String(MAX_PER_ACCOUNT),
    DASHBOARD_LOGIN_FAILURES_PER_IP: String(MAX_PER_IP),
  });
});
afterAll(async () => {
  await api.close();
});

// argon2 as core's passwords.ts loads it (Node's own require, not jest's registry).
const argon2 = createRequire(require.resolve('@mailrail/platform/process/load-on-first-use'))('@node-rs/argon2') as typeof Argon2;

interface Gate {
  /** Verifications started (each waits at the gate until it opens). */
  verified: number;
  open(): void;
}

const gates: Gate[] = [];

/** From now on every argon2 verification is counted and waits until the gate opens. */
function holdVerifications(): Gate {
  const realVerify = argon2.verify.bind(argon2);
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const gate: Gate = { verified: 0, open };
  gates.push(gate);
  jest.spyOn(argon2, 'verify').mockImplementation(async (...args: Parameters<typeof argon2.verify>) => {
    gate.verified++;
    await opened;
    return realVerify(...args);
  });
  return gate;
}

beforeEach(async () => {
  await deleteRedisPrefix(api.deps.redis, `${api.config.REDIS_PREFIX}:dash`);
});
afterEach(() => {
  // A failed test must not leave requests waiting.
  for (const gate of gates.splice(0)) gate.open();
  jest.restoreAllMocks();
});

type Answer = { status: number } | null;

/**
 * Sends `wrong` requests at once, waits until each has reached a verification or been answered,
 * then sends `right` and waits the same for it, then opens the gate. Answers the statuses, the
 * right one's last.
 */
async function burst(
  gate: Gate,
  wrong: (() => PromiseLike<{ status: number }>)[],
  right: () => PromiseLike<{ status: number }>,
): Promise<number[]> {
  const answers: Answer[] = [];
  const settle = (send: () => PromiseLike<{ status: number }>, i: number) =>
    Promise.resolve(send()).then((res) => (answers[i] = { status: res.status }));
  const answered = () => answers.filter(Boolean).length;
  const pending = wrong.map(settle);
  await waitFor(() => gate.verified + answered() >= wrong.length, { timeoutMs: 30_000, intervalMs: 10, what: 'the burst' });
  const before = gate.verified + answered();
  pending.push(settle(right, wrong.length));
  await waitFor(() => gate.verified + answered() > before, { timeoutMs: 30_000, intervalMs: 10, what: 'the right attempt' });
  gate.open();
  await Promise.all(pending);
  return answers.map((a) => a!.status);
}

const login = (email: string, password: string) => () => browser(api).post('/api/dashboard/auth/login', { email, password });
const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

describe('concurrent attempts', () => {
  it(`${BURST} simultaneous wrong sign-ins of one account verify at most DASHBOARD_LOGIN_FAILURES_PER_ACCOUNT passwords; the right one after them is refused`, async () => {
    const { email } = await addUser(api, [{ teamId: api.team.teamId, role: 'ADMIN' }]);
    const gate = holdVerifications();
    const statuses = await burst(
      gate,
      Array.from({ length: BURST - 1 }, () => login(email, 'wrong password!')),
      login(email, PASSWORD),
    );
    expect(gate.verified).toBe(MAX_PER_ACCOUNT);
    expect(count(statuses, 401)).toBe(gate.verified);
    expect(count(statuses, 429)).toBe(BURST - gate.verified);
    expect(statuses[BURST - 1]).toBe(429);
  });

  it(`${BURST} simultaneous sign-ins of different addresses from one IP verify at most DASHBOARD_LOGIN_FAILURES_PER_IP passwords`, async () => {
    const { email } = await addUser(api, [{ teamId: api.team.teamId, role: 'ADMIN' }]);
    const gate = holdVerifications();
    const statuses = await burst(
      gate,
      Array.from({ length: BURST - 1 }, (_, i) => login(`spray${i}@example.org`, 'wrong password!')),
      login(email, PASSWORD),
    );
    expect(gate.verified).toBe(MAX_PER_IP);
    expect(count(statuses, 401)).toBe(gate.verified);
    expect(statuses[BURST - 1]).toBe(429);
  });

  it(`${BURST} simultaneous password changes with a wrong current password verify at most DASHBOARD_LOGIN_FAILURES_PER_ACCOUNT; the right one after them is refused`, async () => {
    const { email } = await addUser(api, [{ teamId: api.team.teamId, role: 'MEMBER' }]);
    const session = await signIn(api, email);
    const change = (currentPassword: string) => () =>
      session.post('/api/dashboard/account/password', { currentPassword, newPassword: 'a new password of mine' });
    const gate = holdVerifications();
    const statuses = await burst(
      gate,
      Array.from({ length: BURST - 1 }, () => change('not my password')),
      change(PASSWORD),
    );
    expect(gate.verified).toBe(MAX_PER_ACCOUNT);
    expect(count(statuses, 400)).toBe(gate.verified);
    expect(statuses[BURST - 1]).toBe(429);
    // The password did not change.
    jest.restoreAllMocks();
    await deleteRedisPrefix(api.deps.redis, `${api.config.REDIS_PREFIX}:dash`);
    await signIn(api, email);
  });
});
