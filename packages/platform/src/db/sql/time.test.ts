import { productionSources } from '@mailrail/testing/source-files';

// Columns are timestamptz: the one place a timestamp meets a zone is isoUtcSql's text output. Any
// other `AT TIME ZONE` or `timezone('UTC', …)` is a workaround for the old zone-less columns.
it('is the only place that spells a time zone conversion in SQL', () => {
  const spelled = /AT TIME ZONE|timezone\('UTC'/i;
  const elsewhere = productionSources()
    .filter(
      (f) =>
        f.path !== 'packages/platform/src/db/sql/time.ts' &&
        f.text.split('\n').some((line) => !line.trimStart().startsWith('//') && spelled.test(line)),
    )
    .map((f) => f.path);
  expect(elsewhere).toEqual([]);
});
