/**
 * Kubernetes' semver library: semver(s[, normalize]), isSemver(s[, normalize]), major/minor/patch,
 * compareTo, isLessThan, isGreaterThan. normalize accepts a leading "v", a missing minor or patch and
 * leading zeros, as Kubernetes does.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { celError, sync } from './common.js';

export class Semver {
  constructor(
    readonly major: bigint,
    readonly minor: bigint,
    readonly patch: bigint,
    readonly pre: string[],
    readonly text: string,
  ) {}
  toJSON(): string {
    return this.text;
  }
  toString(): string {
    return this.text;
  }
  compare(o: Semver): number {
    for (const k of ['major', 'minor', 'patch'] as const) if (this[k] !== o[k]) return this[k] < o[k] ? -1 : 1;
    if (this.pre.length === 0 || o.pre.length === 0) return o.pre.length - this.pre.length === 0 ? 0 : this.pre.length === 0 ? 1 : -1;
    for (let i = 0; i < Math.max(this.pre.length, o.pre.length); i++) {
      const a = this.pre[i];
      const b = o.pre[i];
      if (a === undefined) return -1;
      if (b === undefined) return 1;
      if (a === b) continue;
      const an = /^\d+$/.test(a);
      const bn = /^\d+$/.test(b);
      if (an && bn) return BigInt(a) < BigInt(b) ? -1 : 1;
      if (an !== bn) return an ? -1 : 1;
      return a < b ? -1 : 1;
    }
    return 0;
  }
  celEquals(o: unknown): boolean {
    return o instanceof Semver && this.compare(o) === 0;
  }
}

const NUM = '(0|[1-9]\\d*)';
const IDENT = '(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)';
const STRICT = new RegExp(`^${NUM}\\.${NUM}\\.${NUM}(?:-(${IDENT}(?:\\.${IDENT})*))?(?:\\+[0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*)?$`);

export function parseSemver(s: string, normalize = false): Semver | string {
  let text = s;
  if (normalize) {
    if (text.startsWith('v')) text = text.slice(1);
    const m = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?(.*)$/.exec(text);
    if (m) text = [m[1], m[2] ?? '0', m[3] ?? '0'].map((n) => String(BigInt(n))).join('.') + m[4];
  }
  const m = STRICT.exec(text);
  if (!m) return `No Major.Minor.Patch elements found`;
  return new Semver(BigInt(m[1]), BigInt(m[2]), BigInt(m[3]), m[4] ? m[4].split('.') : [], s);
}

export function registerSemver(env: Environment): void {
  const T = 'kubernetes.Semver';
  const of = (s: string, normalize = false): Semver => {
    const v = parseSemver(s, normalize);
    if (typeof v === 'string') throw celError(`could not parse semver "${s}": ${v}`);
    return v;
  };
  env.registerType(T, Semver);
  env.registerFunction(`semver(string): ${T}`, (s: string) => of(s), sync);
  env.registerFunction(`semver(string, bool): ${T}`, of, sync);
  env.registerFunction('isSemver(string): bool', (s: string) => typeof parseSemver(s) !== 'string', sync);
  env.registerFunction('isSemver(string, bool): bool', (s: string, n: boolean) => typeof parseSemver(s, n) !== 'string', sync);
  env.registerFunction(`${T}.major(): int`, (v: Semver) => v.major, sync);
  env.registerFunction(`${T}.minor(): int`, (v: Semver) => v.minor, sync);
  env.registerFunction(`${T}.patch(): int`, (v: Semver) => v.patch, sync);
  env.registerFunction(`${T}.compareTo(${T}): int`, (a: Semver, b: Semver) => BigInt(a.compare(b)), sync);
  env.registerFunction(`${T}.isLessThan(${T}): bool`, (a: Semver, b: Semver) => a.compare(b) < 0, sync);
  env.registerFunction(`${T}.isGreaterThan(${T}): bool`, (a: Semver, b: Semver) => a.compare(b) > 0, sync);
  env.registerOperator(`${T} == ${T}`, (a: Semver, b: Semver) => a.celEquals(b));
}
