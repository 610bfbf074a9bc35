// Self time of a V8 CPU profile (node --cpu-prof) by function and by file, highest first, and
// inclusive time (the function and everything it called) of functions, to charge a whole step
// (the body parser, the zod parse, the committer's write) with what it costs.
//   npx tsx bench/emails/profile-summary.ts bench/out/profile/CPU.<...>.cpuprofile [--top 40]
// Files under node_modules are grouped by package, so "what the accept path costs" reads as
// express, pino, zod, prisma, ioredis, bullmq, pg, our own code, and V8 (GC, idle, program).
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  children?: number[];
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv[2];
if (!file) throw new Error('usage: profile-summary.ts <file.cpuprofile> [--top N]');
const topIndex = process.argv.indexOf('--top');
const TOP = topIndex > 0 ? Number(process.argv[topIndex + 1]) : 40;
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map<number, ProfileNode>();
for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n);

/** A short owner for a script URL: the npm package, our source file, or node's internals. */
function owner(url: string): string {
  if (!url) return '(v8)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return url;
  const src = url.replace(/^file:\/\//, '');
  const i = src.search(/\/(apps|packages|dist|bench)\//);
  return i >= 0 ? src.slice(i + 1) : src;
}

/** The nearest caller with a script (a native writev or GC is charged to who called it). */
function scriptedCaller(node: ProfileNode): string {
  for (let n: ProfileNode | undefined = node; n; n = parentOf.get(n.id)) {
    if (n.callFrame.url) return `${n.callFrame.functionName || '(anonymous)'} ${owner(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
  }
  return '(none)';
}

const frameName = (n: ProfileNode) => {
  const { functionName, url, lineNumber } = n.callFrame;
  return `${functionName || '(anonymous)'} ${owner(url)}:${lineNumber + 1}`;
};
// Inclusive time: every scripted function on a sample's stack, once per sample (recursion counts once).
const inclusive = new Map<string, number>();
function chargeStack(leaf: ProfileNode, dt: number) {
  const seen = new Set<string>();
  for (let n: ProfileNode | undefined = leaf; n; n = parentOf.get(n.id)) {
    if (!n.callFrame.url) continue;
    const name = frameName(n);
    if (seen.has(name)) continue;
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + dt);
  }
}

const selfByFunction = new Map<string, number>();
const selfByOwner = new Map<string, number>();
const nativeByCaller = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  const node = byId.get(id);
  if (!node) return;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = functionName === '(idle)' ? '(idle)' : owner(url);
  if (functionName !== '(idle)') chargeStack(node, dt);
  if (!url && functionName !== '(idle)' && functionName !== '(garbage collector)' && functionName !== '(program)') {
    const caller = `${functionName} <- ${scriptedCaller(node)}`;
    nativeByCaller.set(caller, (nativeByCaller.get(caller) ?? 0) + dt);
  }
  const fn = `${functionName || '(anonymous)'} ${where}${url ? `:${lineNumber + 1}` : ''}`;
  selfByFunction.set(fn, (selfByFunction.get(fn) ?? 0) + dt);
  selfByOwner.set(where, (selfByOwner.get(where) ?? 0) + dt);
  total += dt;
});

const idle = [...selfByFunction].filter(([k]) => k.startsWith('(idle)')).reduce((s, [, v]) => s + v, 0);
const busy = total - idle;
const table = (title: string, m: Map<string, number>) => {
  console.log(`\n| ${title} | self ms | % of busy |\n|---|---|---|`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
    if (k.startsWith('(idle)')) continue;
    console.log(`| ${k} | ${(v / 1000).toFixed(0)} | ${((100 * v) / busy).toFixed(1)} |`);
  }
};
console.log(`profile ${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy`);
table('by package or file', selfByOwner);
table('by function', selfByFunction);
table('native code by its nearest scripted caller', nativeByCaller);
table('inclusive, by function (self and callees)', inclusive);
