import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';

/**
 * The planner's estimate of the rows a SELECT answers (EXPLAIN, never run): the cost of planning,
 * whatever the table's size, where count(*) over a million emails reads them all. It comes from
 * the table's statistics, so it is rough (ANALYZE refreshes them): a page shows it as "about".
 */
export async function estimatedRowCount(sql: SqlExecutor, select: string, params: readonly unknown[]): Promise<number> {
  const [row] = await sql.query<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] | string }>(`EXPLAIN (FORMAT JSON) ${select}`, params);
  const plan = row?.['QUERY PLAN'];
  const parsed = typeof plan === 'string' ? (JSON.parse(plan) as [{ Plan: { 'Plan Rows': number } }]) : plan;
  return Math.max(0, Math.round(parsed?.[0]?.Plan?.['Plan Rows'] ?? 0));
}
