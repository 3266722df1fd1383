/**
 * Where a V8 CPU profile (node --cpu-prof, e.g. from `npm run bench -- writes --cpu-prof DIR`) spends
 * its time: the functions with the most self time, and self time summed per source file.
 *
 *   node dist/bench/cpuprofile-top.js DIR/CPU.….cpuprofile [--top 25]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface Hot {
  name: string;
  selfMs: number;
  share: number;
}

const shortUrl = (url: string) => url.replace(/^file:\/\//, '').replace(/^.*\/(dist|node_modules)\//, '$1/') || '(native)';

/** Self time per function and per file, largest first. */
export function hotSpots(p: Profile): { functions: Hot[]; files: Hot[]; totalMs: number } {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000);
  const totalMs = [...self.values()].reduce((a, b) => a + b, 0);
  const fn = new Map<string, number>();
  const file = new Map<string, number>();
  for (const [id, ms] of self) {
    const f = byId.get(id)!.callFrame;
    const name = `${f.functionName || '(anonymous)'} ${shortUrl(f.url)}:${f.lineNumber + 1}`;
    fn.set(name, (fn.get(name) ?? 0) + ms);
    const fileName = f.url ? shortUrl(f.url) : f.functionName;
    file.set(fileName, (file.get(fileName) ?? 0) + ms);
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).map(([name, selfMs]) => ({ name, selfMs, share: selfMs / totalMs }));
  return { functions: sorted(fn), files: sorted(file), totalMs };
}

function main(): void {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' } } });
  if (positionals.length !== 1) {
    process.stderr.write('usage: node dist/bench/cpuprofile-top.js FILE.cpuprofile [--top N]\n');
    process.exit(2);
  }
  const p = JSON.parse(readFileSync(positionals[0], 'utf8')) as Profile;
  const top = Number(values.top);
  const { functions, files, totalMs } = hotSpots(p);
  const line = (h: Hot) => `${h.selfMs.toFixed(0).padStart(8)} ms ${(h.share * 100).toFixed(1).padStart(5)} %  ${h.name}`;
  process.stdout.write(
    `profile: ${(totalMs / 1000).toFixed(1)} s sampled\n\nself time by function:\n${functions.slice(0, top).map(line).join('\n')}\n\nself time by file:\n${files.slice(0, top).map(line).join('\n')}\n`,
  );
}

if (process.argv[1]?.endsWith('cpuprofile-top.js')) main();
