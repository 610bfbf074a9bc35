import { Pool } from 'pg';
import { UTC_SESSION_OPTIONS } from '@mailrail/platform/db/client';

// Which partitions of the email log (or the request log) a piece of production code reads: its connections load
// auto_explain with log_analyze, so PostgreSQL sends the executed plan of every statement back as
// a notice, and a partition skipped at run time shows as never executed (Actual Loops 0).
// Used by test/e2e/email-log-pruning.test.ts, test/e2e/request-log-partitions.test.ts and bench/partitions.

interface PlanNode {
  'Relation Name'?: string;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/** The partitions in a plan: `executed` only those run (not skipped at run time). */
function partitionsInPlan(node: PlanNode, executed: boolean, out: string[]): string[] {
  const name = node['Relation Name'];
  if (name && (!executed || (node['Actual Loops'] ?? 1) > 0) && /^(Email|EmailEvent|RequestLog)_/.test(name)) out.push(name);
  for (const child of node.Plans ?? []) partitionsInPlan(child, executed, out);
  return out;
}

export interface ExplainingPool {
  /** A pg pool whose every statement is explained (hand it to PrismaPg or poolExecutor). */
  pool: Pool;
  /** Runs `work` and answers the partitions of "Email", "EmailEvent" and "RequestLog" its statements read, sorted. */
  partitionsRead(work: () => Promise<unknown>): Promise<string[]>;
  /**
   * The partitions its plans hold, read or not. A partition skipped only at run time still costs
   * every execution its planning, its lock and the opening of its indexes (a worker claim that
   * planned all 40 days took 15 ms where the unpartitioned table took 9).
   */
  partitionsPlanned(work: () => Promise<unknown>): Promise<string[]>;
}

/** `sessionOptions`: the startup options of the connections under test (the worker's: PLAN_EACH_RUN_SESSION_OPTIONS). */
export function explainingPool(url: string, max = 2, sessionOptions = UTC_SESSION_OPTIONS): ExplainingPool {
  const explain = [
    'session_preload_libraries=auto_explain',
    'auto_explain.log_min_duration=0',
    'auto_explain.log_analyze=on',
    'auto_explain.log_timing=off',
    'auto_explain.log_format=json',
    'auto_explain.log_level=notice',
    'auto_explain.log_nested_statements=on',
  ];
  const pool = new Pool({ connectionString: url, max, options: `${sessionOptions} ${explain.map((e) => `-c ${e}`).join(' ')}` });
  pool.on('error', () => undefined);
  let plans: PlanNode[] = [];
  pool.on('connect', (client) =>
    client.on('notice', (n: { message?: string }) => {
      const start = n.message?.indexOf('{') ?? -1;
      if (!n.message?.startsWith('duration:') || start < 0) return;
      plans.push((JSON.parse(n.message.slice(start)) as { Plan: PlanNode }).Plan);
    }),
  );
  const partitionsOf = async (work: () => Promise<unknown>, executed: boolean) => {
    plans = [];
    await work();
    return [...new Set(plans.flatMap((plan) => partitionsInPlan(plan, executed, [])))].sort();
  };
  return {
    pool,
    partitionsRead: (work) => partitionsOf(work, true),
    partitionsPlanned: (work) => partitionsOf(work, false),
  };
}
