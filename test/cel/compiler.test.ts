import { describe, expect, test } from 'vitest';
import {
  Activation,
  CelCostLimitError,
  CelEvaluationError,
  CelTimeoutError,
  PolicyCompiler,
  ProgramCache,
  compileSchemaRule,
  celToJson,
  fieldErrorText,
  structTypeOf,
  type CelAuthorizer,
  type CelSchema,
} from '../../src/cel/index.js';
import { re2, regexStates } from '../../src/cel/lib/re2.js';

const deployment: CelSchema = {
  type: 'object',
  properties: {
    metadata: { type: 'object', properties: { name: { type: 'string' }, namespace: { type: 'string' }, labels: { type: 'object', additionalProperties: { type: 'string' } } } },
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer' },
        ratio: { type: 'number' },
        items: { type: 'array', maxItems: 100, items: { type: 'object', properties: { name: { type: 'string', maxLength: 64 }, value: { type: 'integer' } } } },
        unbounded: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
  },
};

const request = {
  kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
  resource: { group: 'apps', version: 'v1', resource: 'deployments' },
  name: 'web',
  namespace: 'ns',
  operation: 'CREATE' as const,
  userInfo: { username: 'alice', groups: ['dev'] },
};
const obj = { metadata: { name: 'web', namespace: 'ns', labels: { app: 'web' } }, spec: { replicas: 3, ratio: 2, items: [{ name: 'a', value: 1 }], extra: { n: 4, f: 1.5 } } };

function run(expr: string, input: Partial<ConstructorParameters<typeof Activation>[0]> = {}, kind: 'validating' | 'mutating' = 'validating') {
  const c = new PolicyCompiler({ kind, schemas: { object: deployment } });
  const r = c.compile(expr, { fieldPath: 'spec.validations[0].expression' });
  if (!r.ok) throw new Error(r.errors.map(fieldErrorText).join('; '));
  return r.program.evaluate(new Activation({ object: obj, oldObject: null, request, ...input }, { schemas: { object: deployment } }));
}

describe('numbers are typed by the schema', () => {
  test.each([
    ['integer field is a CEL int', 'object.spec.replicas + 1', 4n],
    ['number field is a CEL double even when integral', 'object.spec.ratio + 0.5', 2.5],
    ['number field does not add to an int', 'type(object.spec.ratio) == double', true],
    ['unknown fields: integral is int', 'object.spec.extra.n + 1', 5n],
    ['unknown fields: fractional is double', 'object.spec.extra.f * 2.0', 3],
    ['list items typed', 'object.spec.items.all(i, i.value > 0)', true],
    ['request is typed', 'request.userInfo.username == "alice" && request.operation == "CREATE"', true],
    ['oldObject null on create', 'oldObject == null', true],
  ])('%s', (_n, expr, want) => {
    expect(run(expr)).toEqual(want);
  });

  test("a double field does not add to an int literal: a compile error, in cel-go's words", () => {
    expect(() => run('object.spec.ratio + 1')).toThrow(/found no matching overload for '_\+_' applied to '\(double, int\)'/);
  });
});

describe('compile errors carry the field path and position', () => {
  const c = new PolicyCompiler({ kind: 'validating', schemas: { object: deployment } });
  test('misspelt field', () => {
    const r = c.compile('object.spec.replicsa > 1', { fieldPath: 'spec.validations[0].expression' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors[0]).toMatchObject({ type: 'FieldValueInvalid', field: 'spec.validations[0].expression', value: 'object.spec.replicsa > 1' });
    expect(fieldErrorText(r.errors[0])).toBe(
      'spec.validations[0].expression: Invalid value: "object.spec.replicsa > 1": compilation failed: ERROR: <input>:1:13: undefined field \'replicsa\'\n | object.spec.replicsa > 1\n | ............^',
    );
  });
  test('syntax error on the second line', () => {
    const r = c.compile('true &&\n  object.spec. == 1', { fieldPath: 'spec.matchConditions[3].expression' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0].detail).toMatch(/^compilation failed: ERROR: <input>:2:\d+: /);
  });
  test('undeclared variable', () => {
    const r = c.compile('foo == 1', { fieldPath: 'f' });
    expect(!r.ok && r.errors[0].detail).toContain("undeclared reference to 'foo'");
  });
  test('wrong result type', () => {
    const r = c.compile('object.metadata.name', { fieldPath: 'spec.validations[1].expression', returns: ['bool'] });
    expect(!r.ok && r.errors[0]).toMatchObject({ field: 'spec.validations[1].expression', detail: 'must evaluate to bool' });
  });
  test('type mismatch', () => {
    const r = c.compile('object.spec.replicas > "1"', { fieldPath: 'f' });
    expect(r.ok).toBe(false);
  });
  test('webhook match conditions have no params', () => {
    const w = new PolicyCompiler({ kind: 'webhookMatchCondition' });
    expect(w.compile('params == null', { fieldPath: 'f' }).ok).toBe(false);
    expect(w.compile('request.name == "x"', { fieldPath: 'f' }).ok).toBe(true);
  });
});

describe('variables', () => {
  test('typed by their expression, in order, each evaluated at most once', () => {
    const c = new PolicyCompiler({ kind: 'validating', schemas: { object: deployment } });
    expect(c.declareVariable('r', 'object.spec.replicas', 'spec.variables[0].expression').ok).toBe(true);
    expect(c.declareVariable('double', 'variables.r * 2', 'spec.variables[1].expression').ok).toBe(true);
    const bad = c.compile('variables.nope', { fieldPath: 'spec.validations[0].expression' });
    expect(!bad.ok && bad.errors[0].detail).toContain("undefined field 'nope'");
    const typed = c.compile('variables.r == "3"', { fieldPath: 'f' });
    expect(typed.ok).toBe(false);
    const p = c.compile('variables.double + variables.double + variables.r', { fieldPath: 'f' });
    if (!p.ok) throw new Error(p.errors[0].detail);
    let reads = 0;
    const counted = new Proxy(obj, { get: (t, k) => (k === 'spec' && reads++, Reflect.get(t, k)) });
    const act = new Activation({ object: counted, oldObject: null, request }, { schemas: { object: deployment }, variables: c.variables });
    expect(p.program.evaluate(act)).toBe(15n);
    // object was converted once, so `r` was computed once though read three times (twice via `double`).
    expect(reads).toBe(1);
  });
  test('a later variable is not visible to an earlier one', () => {
    const c = new PolicyCompiler({ kind: 'validating' });
    const r = c.declareVariable('a', 'variables.b', 'spec.variables[0].expression');
    expect(r.ok).toBe(false);
  });
  test('an unused variable is never evaluated, and an error is remembered', () => {
    const c = new PolicyCompiler({ kind: 'validating' });
    c.declareVariable('boom', '1 / 0 == 1', 'spec.variables[0].expression');
    const p = c.compile('true', { fieldPath: 'f' });
    const q = c.compile('variables.boom', { fieldPath: 'f' });
    if (!p.ok || !q.ok) throw new Error('compile');
    const act = new Activation({ object: {}, oldObject: null, request }, { variables: c.variables });
    expect(p.program.evaluate(act)).toBe(true);
    expect(() => q.program.evaluate(act)).toThrow(/division by zero/);
    expect(() => q.program.evaluate(act)).toThrow(/division by zero/);
  });
});

describe('authorizer', () => {
  const seen: string[] = [];
  const rbac: CelAuthorizer = {
    authorize(a) {
      seen.push(`${a.user.username} ${a.verb} ${a.apiGroup ?? ''}/${a.resource ?? a.path}/${a.namespace ?? ''}/${a.name ?? ''}`);
      if (a.user.username === 'alice' && a.resource === 'deployments' && a.verb !== 'delete') return { decision: 'allow', reason: 'alice edits deployments' };
      if (a.path === '/healthz') return { decision: 'allow' };
      if (a.resource === 'secrets') return { decision: 'noOpinion', error: 'webhook down' };
      return { decision: 'deny', reason: 'no rule' };
    },
  };
  test.each([
    ["authorizer.group('apps').resource('deployments').namespace('ns').name('web').check('update').allowed()", true],
    ["authorizer.group('apps').resource('deployments').check('delete').reason()", 'no rule'],
    ["authorizer.path('/healthz').check('get').allowed()", true],
    ["authorizer.requestResource.check('create').reason()", 'alice edits deployments'],
    ["authorizer.serviceAccount('ns', 'bot').group('apps').resource('deployments').check('update').allowed()", false],
    ["authorizer.group('').resource('secrets').check('get').errored()", true],
    ["authorizer.group('').resource('secrets').check('get').error()", 'webhook down'],
  ])('%s', (expr, want) => {
    expect(run(expr, { authorizer: rbac })).toEqual(want);
  });
  test('the request resource and the service account are what is asked', () => {
    seen.length = 0;
    run("authorizer.requestResource.check('create').allowed() && !authorizer.serviceAccount('ns', 'bot').path('/x').check('get').allowed()", { authorizer: rbac });
    expect(seen).toEqual(['alice create apps/deployments/ns/web', 'system:serviceaccount:ns:bot get //x//']);
  });
});

describe('object construction (mutating)', () => {
  test('Object{…} builds a plain object to merge', () => {
    const v = run('Object{spec: Object.spec{replicas: object.spec.replicas + 1, items: [Object.spec.items{name: "b", value: 2}]}}', {}, 'mutating');
    expect(structTypeOf(v)).toBe('Object');
    expect(celToJson(v)).toEqual({ spec: { replicas: 4, items: [{ name: 'b', value: 2 }] } });
  });
  test('JSONPatch{…} in a list', () => {
    const v = run('[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("a/b"), value: "x"}]', {}, 'mutating');
    expect(celToJson(v)).toEqual([{ op: 'add', path: '/metadata/labels/a~1b', value: 'x' }]);
  });
  test.each([
    ['Object{spec: Object.spec{replicsa: 1}}', "ERROR: <input>:1:26: undefined field 'replicsa'"],
    ['Object.spce{}', "undeclared reference to 'Object.spce'"],
    ['JSONPatch{op: "add", pth: "/x"}', "undefined field 'pth'"],
  ])('%s is refused at compile time', (expr, want) => {
    const r = new PolicyCompiler({ kind: 'mutating', schemas: { object: deployment } }).compile(expr, { fieldPath: 'spec.mutations[0].applyConfiguration.expression' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0].detail).toContain(want);
  });
  test('not in the validating environment', () => {
    const r = new PolicyCompiler({ kind: 'validating', schemas: { object: deployment } }).compile('Object{}', { fieldPath: 'f' });
    expect(!r.ok && r.errors[0].detail).toContain("undeclared reference to 'Object'");
  });
  test('braces in strings and map literals are left alone', () => {
    expect(run('{"a": "Object{x: 1}"}["a"] == "Object{x: 1}" && "a" in {"a": 1}', {}, 'mutating')).toBe(true);
  });
});

describe('cost and time bounds', () => {
  test('kube-apiserver estimates no admission expression when it is written: a costly one compiles (run-time bounds stop it)', () => {
    const c = new PolicyCompiler({ kind: 'validating', schemas: { object: deployment } });
    const r = c.compile('object.spec.unbounded.all(a, object.spec.unbounded.all(b, a == b))', { fieldPath: 'spec.validations[2].expression' });
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.program.estimatedCost).toBeGreaterThan(10_000_000);
  });
  test('with a static limit, an estimate over it is refused with Kubernetes text', () => {
    const c = new PolicyCompiler({ kind: 'validating', schemas: { object: deployment }, costLimit: 10_000_000 });
    const r = c.compile('object.spec.unbounded.all(a, object.spec.unbounded.all(b, a == b))', { fieldPath: 'spec.validations[2].expression' });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors[0]).toMatchObject({ type: 'FieldValueForbidden', field: 'spec.validations[2].expression' });
      expect(r.errors[0].detail).toMatch(
        /^estimated rule cost exceeds budget by factor of more than 100x \(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared\)$/,
      );
    }
  });
  test('bounded lists keep the same shape of expression under the limit', () => {
    const c = new PolicyCompiler({ kind: 'validating', schemas: { object: deployment } });
    const r = c.compile('object.spec.items.all(a, object.spec.items.all(b, a.name == b.name))', { fieldPath: 'f' });
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.program.estimatedCost).toBeGreaterThan(100 * 100);
  });
  test("a constant-pattern matches costs the string's size times the pattern's, as cel-go estimates it", () => {
    // A maxLength of 250 code points is 1000 bytes (4 each, as Kubernetes sizes it):
    // ceil((1000 + 1) × 0.1) × ceil(40 × 0.25) (cel-go adds 1 to the string's size so an empty
    // string still costs its pattern), plus self.
    const r = compileSchemaRule({ rule: `self.matches('^${'a?'.repeat(19)}$')`, optionalOldSelf: false }, { type: 'string', maxLength: 250 }, 'f');
    if (!r.ok) throw new Error(r.errors[0].detail);
    expect(r.rule.cost).toBe(101 * 10 + 1);
  });
  test('a runtime step limit stops a runaway comprehension with a distinguishable error', () => {
    const c = new PolicyCompiler({ kind: 'validating', costLimit: Infinity });
    const r = c.compile('object.l.all(x, object.l.all(y, object.l.all(z, x + y + z >= 0)))', { fieldPath: 'f' });
    if (!r.ok) throw new Error(r.errors[0].detail);
    const l = Array.from({ length: 200 }, (_, i) => i);
    const act = new Activation({ object: { l }, oldObject: null, request }, { bounds: { costLimit: 10_000, timeoutMs: 60_000 } });
    expect(() => r.program.evaluate(act)).toThrow(CelCostLimitError);
  });
  test('a wall-clock bound stops a long evaluation, even under || which absorbs errors', () => {
    const c = new PolicyCompiler({ kind: 'validating', costLimit: Infinity });
    const r = c.compile('object.l.all(x, object.l.all(y, object.l.all(z, x + y + z >= 0))) || true', { fieldPath: 'f' });
    if (!r.ok) throw new Error(r.errors[0].detail);
    const l = Array.from({ length: 400 }, (_, i) => i); // 64M steps: minutes without the bound
    const act = new Activation({ object: { l }, oldObject: null, request }, { bounds: { costLimit: Number.MAX_SAFE_INTEGER, timeoutMs: 50 } });
    let err: unknown;
    try {
      r.program.evaluate(act);
    } catch (e) {
      err = e;
    }
    // How soon it stops is measured by the admission bench (bench/cel-regex.ts).
    expect(err).toBeInstanceOf(CelTimeoutError);
  });
  test("a variable's steps count toward the expression that reads it, though that expression has no comprehension of its own", () => {
    const c = new PolicyCompiler({ kind: 'validating', costLimit: Infinity });
    c.declareVariable('allPositive', 'object.l.all(x, x >= 0)', 'spec.variables[0].expression');
    c.declareVariable('anyNegative', 'object.l.exists(x, x < 0)', 'spec.variables[1].expression');
    const one = c.compile('variables.allPositive', { fieldPath: 'f' });
    const both = c.compile('variables.allPositive && !variables.anyNegative', { fieldPath: 'f' });
    if (!one.ok || !both.ok) throw new Error('compile');
    const l = Array.from({ length: 6_000 }, (_, i) => i);
    const act = () => new Activation({ object: { l }, oldObject: null, request }, { variables: c.variables, bounds: { costLimit: 10_000, timeoutMs: 60_000 } });
    // 6,000 steps fit the limit; 12,000 under one expression do not.
    expect(one.program.evaluate(act())).toBe(true);
    expect(() => both.program.evaluate(act())).toThrow(CelCostLimitError);
  });
  test('an evaluation error is a CelEvaluationError and not a bound error', () => {
    let err: unknown;
    try {
      run('object.spec.items[5].name == "x"');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CelEvaluationError);
    expect(err).not.toBeInstanceOf(CelTimeoutError);
    expect(err).not.toBeInstanceOf(CelCostLimitError);
  });
});

describe('what a program needs', () => {
  const needs = (expression: string, variables: [string, string][] = []) => {
    const c = new PolicyCompiler({ kind: 'validating', schemas: { object: deployment } });
    variables.forEach(([name, e], i) => {
      if (!c.declareVariable(name, e, `spec.variables[${i}].expression`).ok) throw new Error(name);
    });
    const r = c.compile(expression, { fieldPath: 'f' });
    if (!r.ok) throw new Error(r.errors.map(fieldErrorText).join('; '));
    return r.program.needs;
  };
  const check = "authorizer.group('apps').resource('deployments').check('get').allowed()";
  test.each([
    ['plain field access and has()', 'has(object.spec.replicas) && object.spec.replicas > 1', { steps: false, authorizer: false }],
    ['a quantifier', 'object.spec.items.all(i, i.value > 0)', { steps: true, authorizer: false }],
    ['map and filter', 'object.spec.items.filter(i, i.value > 0).map(i, i.name).size() > 0', { steps: true, authorizer: false }],
    ['exists_one', 'object.spec.items.exists_one(i, i.value > 0)', { steps: true, authorizer: false }],
    ['cel.bind', 'cel.bind(r, object.spec.replicas, r > 1)', { steps: true, authorizer: false }],
    ['the authorizer', check, { steps: false, authorizer: true }],
  ])('%s', (_, expression, expected) => {
    expect(needs(expression)).toEqual(expected);
  });
  test('a variable reference needs what that variable needs, and only that one', () => {
    const vars: [string, string][] = [
      ['r', 'object.spec.replicas'],
      ['loops', 'object.spec.items.exists(i, i.value > 0)'],
      ['allowed', check],
      ['both', 'variables.loops || variables.allowed'],
    ];
    expect(needs('variables.r > 1', vars)).toEqual({ steps: false, authorizer: false });
    expect(needs('variables.loops', vars)).toEqual({ steps: true, authorizer: false });
    expect(needs('has(variables.allowed) && variables.allowed', vars)).toEqual({ steps: false, authorizer: true });
    expect(needs('variables.both', vars)).toEqual({ steps: true, authorizer: true });
  });
});

describe('program cache', () => {
  test('compiles once per (owner, generation, expression) and drops old generations', () => {
    const cache = new ProgramCache<number>();
    let n = 0;
    const build = () => ++n;
    expect(cache.get('uid-1', 1, 'e1', build)).toBe(1);
    expect(cache.get('uid-1', 1, 'e1', build)).toBe(1);
    expect(cache.get('uid-1', 1, 'e2', build)).toBe(2);
    expect(cache.get('uid-2', 1, 'e1', build)).toBe(3);
    expect(cache.get('uid-1', 2, 'e1', build)).toBe(4);
    expect(cache.size).toBe(2);
    expect(cache.compiles).toBe(4);
    cache.forget('uid-1');
    expect(cache.size).toBe(1);
  });
});

describe('regular expressions are RE2 (linear time, RE2 syntax, runtime cost)', () => {
  const compileOk = (expr: string) => {
    const r = new PolicyCompiler({ kind: 'validating', costLimit: Infinity }).compile(expr, { fieldPath: 'spec.validations[0].expression' });
    if (!r.ok) throw new Error(r.errors.map(fieldErrorText).join('; '));
    return r.program;
  };
  const evalOn = (expr: string, object: unknown, costLimit = 1_000_000) =>
    celToJson(compileOk(expr).evaluate(new Activation({ object, oldObject: null, request }, { bounds: { costLimit, timeoutMs: 60_000 } })));

  test('a pattern that backtracks exponentially in JavaScript answers', () => {
    // JavaScript's engine takes seconds on 26 letters (×3.5 per two more) and would not finish the
    // second within the test's timeout; RE2 is linear (its time: the admission bench, bench/cel-regex.ts).
    expect(evalOn("object.note.matches('^([a-z]+ ?)+$')", { note: 'a'.repeat(26) + '!' })).toBe(false);
    expect(evalOn("object.note.find('([a-z]+ ?)+$')", { note: 'a'.repeat(5000) + '!' })).toBe('');
  });
  test("syntax and semantics are RE2's, not JavaScript's", () => {
    expect(evalOn("object.s.matches('(?i)b')", { s: 'aB' })).toBe(true);
    expect(evalOn("object.s.matches('a\\\\z')", { s: 'az' })).toBe(false);
    expect(evalOn("object.s.matches('^[[:alpha:]]+$')", { s: 'abc' })).toBe(true);
    expect(evalOn("object.s.findAll('a*')", { s: 'baaa' })).toEqual(['', 'aaa']);
    expect(evalOn("object.s.find('(?P<k>[a-z]+)=')", { s: 'key=val' })).toBe('key=');
  });
  test('a constant pattern RE2 refuses is a compile error, in cel-go and Kubernetes words', () => {
    const c = new PolicyCompiler({ kind: 'validating' });
    const m = c.compile("object.s.matches('(?=a)')", { fieldPath: 'spec.validations[1].expression' });
    expect(m.ok).toBe(false);
    if (!m.ok)
      expect(fieldErrorText(m.errors[0])).toBe(
        "spec.validations[1].expression: Invalid value: \"object.s.matches('(?=a)')\": compilation failed: ERROR: <input>:1:18: invalid matches argument\n | object.s.matches('(?=a)')\n | .................^",
      );
    const f = c.compile("object.s.find('(a)\\\\1') == ''", { fieldPath: 'spec.validations[2].expression' });
    expect(f.ok).toBe(false);
    if (!f.ok)
      expect(f.errors[0]).toMatchObject({
        type: 'FieldValueInvalid',
        field: 'spec.validations[2].expression',
        detail: 'program instantiation failed: error parsing regexp: invalid escape sequence: `\\1`',
      });
  });
  test('a pattern only known at run time that RE2 refuses is an evaluation error', () => {
    expect(() => evalOn('object.s.matches(object.p)', { s: 'a', p: 'x++' })).toThrow('error parsing regexp: invalid nested repetition operator: `++`');
  });
  test('the runtime cost limit stops a long match before it runs, with Kubernetes error', () => {
    const s = 'a'.repeat(200_000);
    expect(evalOn("object.s.matches('^[a-z]+$')", { s })).toBe(true);
    let err: unknown;
    try {
      evalOn("object.s.matches('^[a-z]+$')", { s }, 10_000);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CelCostLimitError);
    expect((err as Error).message).toBe('operation cancelled: actual cost limit exceeded');
    // Many small matches add up as well.
    const l = Array.from({ length: 1000 }, () => 'a'.repeat(100));
    expect(() => evalOn("object.l.all(x, x.matches('^a+$'))", { l }, 10_000)).toThrow(CelCostLimitError);
    expect(evalOn("object.l.all(x, x.matches('^a+$'))", { l }, 100_000)).toBe(true);
  });
  test("a pattern's cost is Kubernetes' runtime cost: ceil((1 + size) × 0.1) × ceil(size(regex) × 0.25), charged before the match", () => {
    const s = 'a'.repeat(200_000);
    // ceil(200001 × 0.1) × ceil(8 × 0.25) = 20001 × 2
    expect(evalOn("object.s.matches('^[a-z]+$')", { s }, 40_002)).toBe(true);
    expect(() => evalOn("object.s.matches('^[a-z]+$')", { s }, 40_001)).toThrow('operation cancelled: actual cost limit exceeded');
    expect(() => evalOn("object.s.find('[a-z]+')", { s }, 20_000)).toThrow(CelCostLimitError);
    expect(() => evalOn("object.s.findAll('[a-z]+')", { s }, 20_000)).toThrow(CelCostLimitError);
  });
  test('a counted repetition is charged by the states it expands to, so a match that would stall the server for seconds is refused before it starts', () => {
    expect(regexStates(re2('^[a-z]+$'))).toBe(1);
    expect(regexStates(re2('foo'))).toBe(3);
    // re2js' program, read through its internals: this fails if a new version changes them.
    expect(regexStates(re2('[a-z]{1000}!'))).toBe(1001);
    // 100,000 characters: Kubernetes' cost from the pattern's 12 characters is 10001 × 3 = 30,003,
    // under the limit, and the find takes seconds (every position starts a 1001-state match).
    // By its states it is 10001 × 251, past the 1,000,000 limit: refused at once.
    const s = ('a'.repeat(999) + '!').repeat(100);
    expect(() => evalOn("object.s.find('[a-z]{1000}!')", { s })).toThrow('operation cancelled: actual cost limit exceeded');
    // The same pattern on a string its cost allows still runs: ceil(3001 × 0.1) × 251 = 75,551.
    expect(evalOn("object.s.find('[a-z]{1000}!')", { s: s.slice(0, 3000) })).toBe('');
    expect(evalOn("object.s.find('[a-z]{999}!')", { s: s.slice(0, 3000) })).toBe('a'.repeat(999) + '!');
  });
});
