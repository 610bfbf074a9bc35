import type { Response } from 'supertest';

/** A 400 in the standard shape whose issues name `path` (e.g. ['variables', 1] or [3, 'email']). */
export function expectBadRequest(res: Response, path: (string | number)[]): void {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('BAD_REQUEST');
  expect(res.body.error.issues.map((i: { path: unknown }) => i.path)).toContainEqual(path);
}
