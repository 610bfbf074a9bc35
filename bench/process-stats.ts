// What the benches read of a process from /proc (Linux): its CPU time and its memory. One place,
// so every bench counts the same fields the same way.
import { readdirSync, readFileSync } from 'node:fs';

/** The fields of /proc/<pid>/stat after the command name (utime is [11], stime [12], cutime [13], cstime [14]). */
function statFields(pid: number | undefined): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU seconds (user + system) used so far by a process; NaN once it is gone. Linux counts ticks of 1/100 s. */
export function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = statFields(pid);
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** The pids of the processes running now: the numeric entries of /proc. */
function processIds(): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number);
}

/**
 * CPU seconds used so far by every process whose command name is `comm` (postgres, redis-server),
 * with the children they have reaped: PostgreSQL's backends come and go, and an ended one's time
 * moves to the postmaster's cutime / cstime.
 */
export function cpuSecondsOfCommand(comm: string): number {
  let total = 0;
  for (const pid of processIds()) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== comm) continue;
      const fields = statFields(pid);
      total += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** CPU seconds so far of PostgreSQL's and Redis's processes: on 2 cores their work slows the process measured too. */
export function storesCpuSeconds(): { postgres: number; redis: number } {
  return { postgres: cpuSecondsOfCommand('postgres'), redis: cpuSecondsOfCommand('redis-server') };
}

/** A memory figure of /proc/<pid>/status in MB (VmRSS: resident now, VmHWM: its peak); NaN when absent. */
export function procStatusMb(pid: number, field: 'VmRSS' | 'VmHWM' | 'RssAnon'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** CPU seconds so far of every process on the machine, by pid, with the start of its command line. */
export function cpuCensus(): Map<number, { cpu: number; command: string }> {
  const census = new Map<number, { cpu: number; command: string }>();
  for (const pid of processIds()) {
    try {
      const line = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      // Node's flags come first and the script last: keep both ends of a long line.
      const command = line.length > 90 ? `${line.slice(0, 25)}…${line.slice(-60)}` : line;
      census.set(pid, { cpu: cpuSeconds(pid), command: command || readFileSync(`/proc/${pid}/comm`, 'utf8').trim() });
    } catch {
      // gone meanwhile
    }
  }
  return census;
}

/**
 * The processes that used the most CPU since `before` (a cpuCensus), as "seconds pid command"
 * joined by " | ": when a timing check fails, it tells whether something else kept the machine busy.
 */
export function busiestSince(before: Map<number, { cpu: number }>, top = 6): string {
  return [...cpuCensus()]
    .map(([pid, now]) => ({ pid, command: now.command, used: now.cpu - (before.get(pid)?.cpu ?? 0) }))
    .filter((p) => p.used >= 0.05)
    .sort((a, b) => b.used - a.used)
    .slice(0, top)
    .map((p) => `${p.used.toFixed(1)}s ${p.pid} ${p.command}`)
    .join(' | ');
}
