/**
 * Runs the cel-spec conformance data (@bufbuild/cel-spec's SimpleTest JSON) against our base
 * environment. Values are compared as tagged strings (i:3 is not d:3), an expected error passes on
 * any error, and a case whose bindings or result need protobuf messages cannot be expressed.
 */
import { Optional } from '@marcbachmann/cel-js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { tests } from '@bufbuild/cel-spec/testdata/conformance.js';
import { createCelEnvironment } from '../../src/cel/environment.js';
import { kubernetesHas } from '../../src/cel/has-macro.js';

type Json = any;

export interface Case {
  section: string;
  name: string;
  expr: string;
  test: Json;
}

export function allCases(): Case[] {
  const out: Case[] = [];
  const walk = (s: Json, path: string[]) => {
    for (const t of s.tests ?? []) out.push({ section: path[0], name: [...path, t.original.name ?? t.original.expr].join('/'), expr: t.original.expr, test: t.original });
    for (const sub of s.suites ?? []) walk(sub, [...path, sub.name]);
  };
  for (const s of (tests as Json).suites) walk(s, [s.name]);
  return out;
}

class Unsupported extends Error {}

function fromValue(v: Json): unknown {
  if ('int64Value' in v) return BigInt(v.int64Value);
  if ('uint64Value' in v) return new UnsignedInt(BigInt(v.uint64Value));
  if ('doubleValue' in v) return typeof v.doubleValue === 'string' ? Number(v.doubleValue.replace('Infinity', 'Infinity')) : v.doubleValue;
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('nullValue' in v) return null;
  if ('bytesValue' in v) return new Uint8Array(Buffer.from(v.bytesValue, 'base64'));
  if ('listValue' in v) return (v.listValue.values ?? []).map(fromValue);
  if ('mapValue' in v) {
    const m = new Map<unknown, unknown>();
    for (const e of v.mapValue.entries ?? []) m.set(fromValue(e.key), fromValue(e.value));
    return m;
  }
  if ('typeValue' in v) return { __type: v.typeValue };
  throw new Unsupported(`value ${Object.keys(v)[0]}`);
}

export function tag(v: unknown): string {
  if (typeof v === 'bigint') return `i:${v}`;
  if (v instanceof UnsignedInt) return `u:${v.valueOf()}`;
  if (typeof v === 'number') return `d:${Number.isNaN(v) ? 'NaN' : Object.is(v, -0) ? '0' : v}`;
  if (typeof v === 'string') return `s:${JSON.stringify(v)}`;
  if (typeof v === 'boolean') return `b:${v}`;
  if (v === null) return 'null';
  if (v instanceof Uint8Array) return `B:${Buffer.from(v).toString('hex')}`;
  if (v instanceof Date) return `t:${v.toISOString()}`;
  if (v instanceof Duration) return `D:${v.toString()}`;
  if (v instanceof Optional) return v.hasValue() ? `opt(${tag(v.value())})` : 'opt()';
  if (Array.isArray(v)) return `[${v.map(tag).join(',')}]`;
  if (v instanceof Map)
    return `{${[...v.entries()]
      .map(([k, x]) => `${tag(k)}:${tag(x)}`)
      .sort()
      .join(',')}}`;
  if (typeof v === 'object' && v !== null && '__type' in v) return `T:${(v as { __type: string }).__type}`;
  if (typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype) return tag(new Map(Object.entries(v)));
  if (typeof v === 'object' && v !== null && 'name' in v && v.constructor?.name === 'Type') return `T:${(v as { name: string }).name}`;
  return `?:${String(v)}`;
}

const env = createCelEnvironment({ unlistedVariablesAreDyn: true });

export type Outcome = { ok: true } | { ok: false; why: string };

export function runCase(c: Case): Outcome {
  const t = c.test;
  try {
    if (t.container || t.checkOnly || t.disableMacros) throw new Unsupported('container/checkOnly/disableMacros');
    const bindings: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(t.bindings ?? {})) {
      const ev = v as Json;
      if (!ev.value) throw new Unsupported('binding without value');
      bindings[k] = fromValue(ev.value);
    }
    const expectError = !!(t.evalError || t.anyEvalErrors);
    const expected = t.value ? tag(fromValue(t.value)) : t.typedResult?.result ? tag(fromValue(t.typedResult.result)) : expectError ? undefined : 'b:true';
    let got: unknown;
    try {
      // has() as the compiler runs it (has-macro.ts), not the library's own.
      const parsed = env.parse(c.expr);
      kubernetesHas(parsed.ast);
      got = parsed(bindings);
    } catch (e) {
      if (expectError) return { ok: true };
      return { ok: false, why: `error: ${(e as Error).message.split('\n')[0]}` };
    }
    if (expectError) return { ok: false, why: `expected an error, got ${safeTag(got)}` };
    const g = safeTag(got);
    return g === expected ? { ok: true } : { ok: false, why: `got ${g}, want ${expected}` };
  } catch (e) {
    return { ok: false, why: e instanceof Unsupported ? `unsupported: ${e.message}` : `runner: ${(e as Error).message}` };
  }
}

function safeTag(v: unknown): string {
  try {
    return tag(v);
  } catch {
    return '?';
  }
}
