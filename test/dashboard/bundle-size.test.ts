import { ensureWebBuilt } from '../../scripts/web-build';
import { FIRST_LOAD_BUDGET_BYTES, firstLoadJs } from '../../scripts/web-bundle-size';

// Issue 18: the dashboard's first load carries at most 300 KB of compressed JavaScript.
// The figures are recorded in bench/RESULTS.md ("Dashboard first load").
test('the first load of the dashboard stays within 300 KB of gzip JavaScript', () => {
  ensureWebBuilt();
  const { signIn, overview } = firstLoadJs();
  expect(signIn.files.length).toBeGreaterThan(0);
  // The signed-in landing page includes the sign-in load plus the Overview page and its chart.
  expect(overview.gzipBytes).toBeGreaterThan(signIn.gzipBytes);
  expect(overview.gzipBytes).toBeLessThanOrEqual(FIRST_LOAD_BUDGET_BYTES);
}, 120_000);
