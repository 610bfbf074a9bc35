import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ADDRESS_IN_USE, PortTakenError, startOnFreePorts } from './free-port';
import { waitFor } from './wait-for';

// Local Redis deployments for the scale tests (npm run test:scale): real redis-server processes on
// free loopback ports (drawn again when one is taken before redis-server binds it), each in its own temporary directory, stopped and removed by stop().

const run = promisify(execFile);

interface Node {
  port: number;
  process: ChildProcess;
}

/** One node of CLUSTER NODES. */
export interface ClusterNode {
  id: string;
  port: number;
  master: boolean;
  /** The master's id for a replica ('-' for a master). */
  masterId: string;
  slots: [number, number][];
}

export interface LocalRedisCluster {
  /** host:port of every node, the value of REDIS_CLUSTER_NODES. */
  nodes: string;
  ports: number[];
  /** Runs redis-cli against one node and answers its output. */
  cli(port: number, ...args: string[]): Promise<string>;
  /** CLUSTER NODES as a surviving node sees it, failed nodes left out. */
  topology(): Promise<ClusterNode[]>;
  /** The master serving `slot` now, if any. */
  ownerOf(slot: number): Promise<ClusterNode | undefined>;
  /** SIGKILLs one node (a crash: what it had not replicated is lost). */
  kill(port: number): Promise<void>;
  /** SIGSTOPs / SIGCONTs one node: a stopped replica falls behind its master. */
  pause(port: number): void;
  resume(port: number): void;
  stop(): Promise<void>;
}

export interface LocalRedisSentinel {
  /** host:port of every sentinel, the value of REDIS_SENTINELS. */
  sentinels: string;
  /** The master name, the value of REDIS_SENTINEL_NAME. */
  name: string;
  masterPort: number;
  replicaPort: number;
  cli(port: number, ...args: string[]): Promise<string>;
  stop(): Promise<void>;
}

/** Why these tests cannot run here (no redis-server or redis-cli, or one without cluster support), or null. */
async function localRedisUnavailable(): Promise<string | null> {
  try {
    const { stdout } = await run('redis-server', ['--version']);
    const major = Number(/v=(\d+)\./.exec(stdout)?.[1] ?? 0);
    // cluster-port (the bus port chosen freely, needed on random ports) came with Redis 7.
    if (major < 7) return `redis-server ${stdout.trim()} is older than 7`;
    await run('redis-cli', ['--version']);
    return null;
  } catch (err) {
    return `redis-server or redis-cli missing (apt-get install -y redis-server redis-tools): ${(err as Error).message}`;
  }
}

/**
 * Starts redis-server on `port` (its arguments or its configuration file in `args`), ready when the
 * server answering there is this child (its process_id): another process may have taken the port
 * after freePorts answered it, and then the child exits reporting the address in use (PortTakenError).
 */
async function startRedisProcess(port: number, args: string[]): Promise<Node> {
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  for (const stream of [child.stdout!, child.stderr!]) stream.setEncoding('utf8').on('data', (c: string) => (output += c));
  const node = { port, process: child };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null || child.signalCode !== null) {
          if (ADDRESS_IN_USE.test(output)) throw new PortTakenError(`port ${port} taken before redis-server bound it`);
          throw new Error(`redis-server exited at start:\n${output}`);
        }
        const info = await cli(port, 'info', 'server').catch(() => '');
        return info.includes(`process_id:${child.pid}\r`) || info.includes(`process_id:${child.pid}\n`);
      },
      { timeoutMs: 10_000, intervalMs: 50, what: `redis-server on port ${port}` },
    );
  } catch (err) {
    await stopAll([node], null);
    throw err;
  }
  return node;
}

/** A redis-server on free ports (the first its client port), drawn again when one was taken meanwhile. */
const startNode = (portCount: number, args: (ports: number[]) => Promise<string[]>): Promise<Node> =>
  startOnFreePorts(portCount, async (ports) => startRedisProcess(ports[0], await args(ports)));

const serverArgs = (dir: string, port: number, extra: string[]) => [
  '--port',
  String(port),
  '--bind',
  '127.0.0.1',
  '--dir',
  dir,
  '--save',
  '',
  '--appendonly',
  'no',
  '--loglevel',
  'warning',
  ...extra,
];

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args]);
  return stdout.trim();
}

async function stopAll(nodes: Node[], dir: string | null): Promise<void> {
  await Promise.all(
    nodes.map(
      (n) =>
        new Promise<void>((resolve) => {
          if (n.process.exitCode !== null || n.process.signalCode !== null) return resolve();
          n.process.once('exit', () => resolve());
          n.process.kill('SIGKILL');
        }),
    ),
  );
  if (dir) await rm(dir, { recursive: true, force: true });
}

/** The scale proof must fail, not skip, on a machine that cannot run it: CI would pass without it. */
async function failWhereLocalRedisIsUnavailable(): Promise<void> {
  const missing = await localRedisUnavailable();
  if (missing) throw new Error(missing);
}

/**
 * Six redis-server processes in cluster mode, 3 masters and 3 replicas (redis-cli --cluster
 * create --cluster-replicas 1), ready when every node reports cluster_state:ok.
 */
export async function startLocalRedisCluster(): Promise<LocalRedisCluster> {
  await failWhereLocalRedisIsUnavailable();
  const dir = await mkdtemp(path.join(tmpdir(), 'mailrail-redis-cluster-'));
  const nodes: Node[] = [];
  try {
    for (let i = 0; i < 6; i++) {
      nodes.push(
        await startNode(2, async ([port, busPort]) => {
          const nodeDir = path.join(dir, String(port));
          await mkdir(nodeDir, { recursive: true });
          return serverArgs(nodeDir, port, [
            '--cluster-enabled',
            'yes',
            '--cluster-port',
            String(busPort),
            '--cluster-config-file',
            path.join(nodeDir, 'nodes.conf'),
            '--cluster-node-timeout',
            '2000',
          ]);
        }),
      );
    }
    const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
    const nodeAt = (port: number) => {
      const node = nodes.find((n) => n.port === port);
      if (!node) throw new Error(`no node on port ${port}`);
      return node;
    };
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes']);
    await waitFor(
      async () => {
        for (const n of nodes) if (!(await cli(n.port, 'cluster', 'info')).includes('cluster_state:ok')) return false;
        // And every replica attached to its master (create assigns them just after the slots).
        const topology = await cli(nodes[0].port, 'cluster', 'nodes');
        return topology.split('\n').filter((line) => / slave [0-9a-f]{40} /.test(line)).length === 3;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const ports = nodes.map((n) => n.port);
    const topology = () => clusterTopology(ports);
    return {
      nodes: addresses.join(','),
      ports,
      cli,
      topology,
      ownerOf: async (slot) => (await topology()).find((n) => n.master && n.slots.some(([a, b]) => slot >= a && slot <= b)),
      pause: (port) => void nodeAt(port).process.kill('SIGSTOP'),
      resume: (port) => void nodeAt(port).process.kill('SIGCONT'),
      kill: async (port) => {
        const node = nodeAt(port);
        if (node.process.exitCode !== null || node.process.signalCode !== null) return;
        await new Promise<void>((resolve) => {
          node.process.once('exit', () => resolve());
          node.process.kill('SIGKILL');
        });
      },
      stop: () => stopAll(nodes, dir),
    };
  } catch (err) {
    await stopAll(nodes, dir);
    throw err;
  }
}

async function clusterTopology(ports: number[]): Promise<ClusterNode[]> {
  for (const port of ports) {
    const text = await cli(port, 'cluster', 'nodes').catch(() => '');
    if (!text.includes('myself')) continue;
    return text
      .split('\n')
      .map((line) => line.split(' '))
      .filter((f) => !f[2].includes('fail'))
      .map((f) => ({
        id: f[0],
        port: Number(f[1].split('@')[0].split(':')[1]),
        master: f[2].includes('master'),
        masterId: f[3],
        slots: f
          .slice(8)
          .map((r) => r.split('-').map(Number) as [number, number])
          .map(([a, b]) => [a, b ?? a] as [number, number]),
      }));
  }
  throw new Error('no cluster node answers');
}

/** One master, one replica and three sentinels watching it (quorum 2), all on loopback. */
export async function startLocalRedisSentinel(name = 'mailrail-test'): Promise<LocalRedisSentinel> {
  await failWhereLocalRedisIsUnavailable();
  const dir = await mkdtemp(path.join(tmpdir(), 'mailrail-redis-sentinel-'));
  const nodes: Node[] = [];
  try {
    const master = await startNode(1, async ([port]) => serverArgs(dir, port, []));
    nodes.push(master);
    const replicaDir = path.join(dir, 'replica');
    await mkdir(replicaDir, { recursive: true });
    const replica = await startNode(1, async ([port]) => serverArgs(replicaDir, port, ['--replicaof', '127.0.0.1', String(master.port)]));
    nodes.push(replica);
    const sentinelPorts: number[] = [];
    for (let i = 0; i < 3; i++) {
      const sentinel = await startNode(1, async ([port]) => {
        // A sentinel rewrites its configuration file, so each gets its own.
        const conf = path.join(dir, `sentinel-${port}.conf`);
        await writeFile(
          conf,
          [
            `port ${port}`,
            'bind 127.0.0.1',
            `dir ${dir}`,
            `sentinel monitor ${name} 127.0.0.1 ${master.port} 2`,
            `sentinel down-after-milliseconds ${name} 1000`,
            `sentinel failover-timeout ${name} 5000`,
            '',
          ].join('\n'),
        );
        return [conf, '--sentinel'];
      });
      nodes.push(sentinel);
      sentinelPorts.push(sentinel.port);
    }
    await waitFor(async () => (await cli(master.port, 'info', 'replication')).includes('connected_slaves:1'), {
      timeoutMs: 15_000,
      intervalMs: 100,
    });
    return {
      sentinels: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
      name,
      masterPort: master.port,
      replicaPort: replica.port,
      cli,
      stop: () => stopAll(nodes, dir),
    };
  } catch (err) {
    await stopAll(nodes, dir);
    throw err;
  }
}
