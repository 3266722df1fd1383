/** Kubernetes' regex library: string.find(regex) and string.findAll(regex[, limit]). */
import type { Environment } from '@marcbachmann/cel-js';
import { sync } from './common.js';
import { re2 } from './re2.js';

export function registerRegex(env: Environment): void {
  env.registerFunction('string.find(string): string', (s: string, p: string) => re2(p).exec(s)?.[0] ?? '', sync);
  env.registerFunction('string.findAll(string): list<string>', (s: string, p: string) => findAll(s, p, -1n), sync);
  env.registerFunction('string.findAll(string, int): list<string>', findAll, sync);
}

function findAll(s: string, p: string, limit: bigint): string[] {
  if (limit === 0n) return [];
  const re = re2(p, true);
  const out: string[] = [];
  for (let m = re.exec(s); m; m = re.exec(s)) {
    out.push(m[0]);
    if (m[0] === '') re.lastIndex++;
    if (limit > 0n && BigInt(out.length) >= limit) break;
  }
  return out;
}
