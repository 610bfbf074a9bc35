import { segmentFilter } from '@mailrail/domain/audience/segments/segment-filter';
import { escapeLike, segmentFilterSql } from '@mailrail/domain/audience/segments/segment-sql';

// The compiler's promise, checked on its output: no value (nor property name) ever appears in the
// SQL text; each one is a $n parameter, numbered after the ones the caller already has.

const HOSTILE = `x'); DROP TABLE "Contact"; --`;

it('puts every value and property name in the parameters, none in the SQL text', () => {
  const filter = segmentFilter.parse({
    match: 'any',
    conditions: [
      { field: 'email', operator: 'contains', value: HOSTILE },
      { field: 'firstName', operator: 'in', value: [HOSTILE, 'b'] },
      { field: `properties.${HOSTILE}`, operator: 'equals', value: HOSTILE },
      {
        match: 'all',
        conditions: [
          { field: 'properties.age', operator: 'gt', value: 41 },
          { field: 'createdAt', operator: 'lt', value: '2026-01-01' },
          { field: 'subscribed', operator: 'equals', value: true },
        ],
      },
    ],
  });
  const params: unknown[] = ['book'];
  const sql = segmentFilterSql(filter, 'c', { teamId: 1, now: new Date() }, params);
  expect(sql).not.toContain('DROP');
  expect(sql).not.toContain('41');
  expect(sql).not.toContain('2026');
  expect(params[0]).toBe('book');
  expect(params).toContain(`%${escapeLike(HOSTILE)}%`);
  expect(params).toContain(HOSTILE); // the property name
  expect(params).toContain(41);
  expect(params).toContainEqual(new Date('2026-01-01T00:00:00Z'));
  // Placeholders run from $2 to $n, each used, none beyond the list.
  const used = new Set([...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
  expect(Math.min(...used)).toBe(2);
  expect(Math.max(...used)).toBe(params.length);
  expect(sql).toMatch(/^\(.* OR .*\)$/s);
});

it('escapes LIKE wildcards and the escape character', () => {
  expect(escapeLike('50%_off\\')).toBe('50\\%\\_off\\\\');
});
