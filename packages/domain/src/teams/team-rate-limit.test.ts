import { effectiveTeamRateLimit } from './team-rate-limit';

const config = { API_RATE_LIMIT: 10, API_RATE_LIMIT_MAX: 50 };

it('a team without its own rate gets the default; its own rate up to the ceiling is kept', () => {
  expect(effectiveTeamRateLimit(null, config)).toBe(10);
  expect(effectiveTeamRateLimit(1, config)).toBe(1);
  expect(effectiveTeamRateLimit(50, config)).toBe(50);
});

it('a stored rate above API_RATE_LIMIT_MAX, or 0 (unlimited), is clamped to the ceiling', () => {
  expect(effectiveTeamRateLimit(51, config)).toBe(50);
  expect(effectiveTeamRateLimit(100_000, config)).toBe(50);
  expect(effectiveTeamRateLimit(0, config)).toBe(50);
});

it('with no ceiling (0), a team keeps whatever it has, unlimited included; the default is never clamped', () => {
  expect(effectiveTeamRateLimit(0, { API_RATE_LIMIT: 10, API_RATE_LIMIT_MAX: 0 })).toBe(0);
  expect(effectiveTeamRateLimit(5000, { API_RATE_LIMIT: 10, API_RATE_LIMIT_MAX: 0 })).toBe(5000);
  expect(effectiveTeamRateLimit(null, { API_RATE_LIMIT: 0, API_RATE_LIMIT_MAX: 50 })).toBe(0);
});
