/**
 * Compiling admission expressions: parse, rewrite object literals, type-check against the kind's
 * schema, estimate the cost, and return a program or field errors worded as Kubernetes words them.
 *
 *   const c = new PolicyCompiler({ kind: 'validating', schemas: { object: deploymentSchema } });
 *   c.declareVariable('replicas', 'object.spec.replicas', 'spec.variables[0].expression');
 *   const r = c.compile('variables.replicas < 5', { fieldPath: 'spec.validations[0].expression', returns: ['bool'] });
 *   if (!r.ok) → r.errors (422 causes); else r.program.evaluate(activation)
 *
 * Variables are declared in order: an expression sees `variables.x` for each variable declared
 * before it, typed by that variable's own expression (as Kubernetes composes them).
 */
import type { ASTNode, Environment, ParseResult, TypeCheckResult } from '@marcbachmann/cel-js';
import { checkerFor, evaluatorFor, hasVariablesVariable, REQUEST_SCHEMA, variableNames, type EnvKind, type EnvSchemas } from './admission-env.js';
import type { EvaluationBounds } from './budget.js';
import type { VariableProgram } from './activation.js';
import { withBounds } from './budget.js';
import { costExceededDetail, CostEstimator, type Roots } from './cost.js';
import { declOf } from './cost-decl.js';
import { CelEvaluationError, compileFieldError, type CelFieldError, type CelIssue } from './errors.js';
import { kubernetesHas } from './has-macro.js';
import { literalIssues } from './literal-checks.js';
import { needsOf, type ProgramNeeds } from './program-needs.js';
import { bindRegexCalls } from './regex-calls.js';
import { propertySchema, type CelSchema } from './schema.js';
import { rewriteStructLiterals, type StructLiteral } from './struct-literals.js';

export interface CompileOptions {
  /** Where the expression sits in the object being written: spec.validations[0].expression. */
  fieldPath: string;
  /** The result types allowed (dyn always passes); omitted: anything. */
  returns?: readonly string[];
}

export interface CelProgram extends VariableProgram {
  readonly expression: string;
  readonly fieldPath: string;
  /** The checked result type: bool, string, list<…>, Object, dyn… */
  readonly resultType: string;
  readonly estimatedCost: number;
  /** Whether it may run comprehension steps or read `authorizer` (with the variables it reads). */
  readonly needs: ProgramNeeds;
  /** Evaluates under the activation's bounds; throws CelEvaluationError (or its cost/timeout kinds). */
  evaluate(activation: Evaluation): unknown;
}

/** What a program runs on: the variables as the library reads them, and the bounds of the run (an Activation is one). */
export interface Evaluation {
  readonly context: object;
  readonly bounds: EvaluationBounds;
}

export type CompileResult = { ok: true; program: CelProgram } | { ok: false; errors: CelFieldError[] };

export interface PolicyCompilerOptions {
  kind: EnvKind;
  schemas?: EnvSchemas;
  /**
   * A static cost limit per expression; none by default: kube-apiserver estimates no admission
   * expression's cost when it is written (only a CRD's rules, which resources/crd/schema-rules.ts
   * limits by the estimate times how often the rule may run), and bounds them at run time.
   */
  costLimit?: number;
}

const JSONPATCH_FIELDS = new Set(['op', 'path', 'from', 'value']);

export class PolicyCompiler {
  private readonly checker: Environment;
  private readonly evaluator: Environment;
  private readonly costLimit: number;
  private readonly declared = new Map<string, { type: string; program: CelProgram }>();
  private withVariables: Environment | undefined;

  constructor(readonly options: PolicyCompilerOptions) {
    this.checker = checkerFor(options.kind, options.schemas);
    this.evaluator = evaluatorFor(options.kind);
    this.costLimit = options.costLimit ?? Number.POSITIVE_INFINITY;
  }

  /** The variable programs declared so far, by name (the activation evaluates them lazily). */
  get variables(): ReadonlyMap<string, CelProgram> {
    return new Map([...this.declared].map(([k, v]) => [k, v.program]));
  }

  /** Compiles a variable's expression and, when it compiles, declares `variables.<name>` for later ones. */
  declareVariable(name: string, expression: string, fieldPath: string): CompileResult {
    const r = this.compile(expression, { fieldPath });
    if (r.ok) {
      this.declared.set(name, { type: r.program.resultType, program: r.program });
      this.withVariables = undefined;
    }
    return r;
  }

  compile(expression: string, opts: CompileOptions): CompileResult {
    const fail = (issues: CelIssue[]): CompileResult => ({ ok: false, errors: [compileFieldError(opts.fieldPath, expression, issues)] });
    const rw = rewriteStructLiterals(expression);
    const issues: CelIssue[] = [...rw.issues, ...this.checkStructs(rw.structs)];
    if (issues.length) return fail(issues);
    const toOrigin = (n?: number) => (n === undefined ? undefined : rw.origin[Math.min(n, rw.origin.length - 1)]);

    let checked: TypeCheckResult;
    let checkedAst: ASTNode;
    let parsed: ParseResult;
    try {
      ({ checked, ast: checkedAst } = checkParsed(this.checkEnv(), rw.text));
      if (!checked.valid) {
        const err = checked.error!;
        return fail([{ message: kubernetesWording(err.code, err.summary), start: toOrigin(err.range?.start) }]);
      }
      parsed = this.evaluator.parse(rw.text);
      kubernetesHas(parsed.ast as ASTNode);
    } catch (e) {
      const err = e as { code?: string; summary?: string; message: string; range?: { start: number } };
      return fail([{ message: kubernetesWording(err.code, err.summary ?? err.message), start: toOrigin(err.range?.start) }]);
    }
    const regex = bindRegexCalls(parsed.ast as ASTNode);
    const literals = literalIssues(checkedAst);
    if (literals.length || regex.issues.length) return fail([...literals, ...regex.issues].sort((a, b) => (a.start ?? 0) - (b.start ?? 0)).map((i) => ({ ...i, start: toOrigin(i.start) })));
    if (regex.instantiation) return { ok: false, errors: [{ type: 'FieldValueInvalid', field: opts.fieldPath, value: expression, detail: regex.instantiation }] };
    const resultType = checked.type ?? 'dyn';
    if (opts.returns && resultType !== 'dyn' && !opts.returns.includes(resultType)) {
      return { ok: false, errors: [{ type: 'FieldValueInvalid', field: opts.fieldPath, value: expression, detail: `must evaluate to ${opts.returns.join(' or ')}` }] };
    }
    const cost = new CostEstimator(this.costRoots()).estimate(checkedAst);
    if (cost > this.costLimit) {
      return { ok: false, errors: [{ type: 'FieldValueForbidden', field: opts.fieldPath, detail: costExceededDetail(cost, this.costLimit) }] };
    }
    const needs = needsOf(parsed.ast as ASTNode, new Map([...this.declared].map(([k, v]) => [k, v.program.needs])));
    return { ok: true, program: new Program(expression, opts.fieldPath, resultType, cost, needs, parsed) };
  }

  private checkEnv(): Environment {
    if (!hasVariablesVariable(this.options.kind)) return this.checker;
    if (!this.withVariables) {
      const env = this.checker.clone();
      const fields: Record<string, string> = {};
      for (const [name, v] of this.declared) fields[name] = v.type === 'list' ? 'list<dyn>' : v.type === 'map' ? 'map<dyn, dyn>' : v.type;
      const typeName = `Variables${nextVariablesType++}`;
      env.registerType(typeName, { fields });
      env.registerVariable('variables', typeName);
      this.withVariables = env;
    }
    return this.withVariables;
  }

  /** The sizes of the root variables, from their schemas (a CRD rule's self and oldSelf: the node it sits on). */
  private costRoots(): Roots {
    if (this.rootDecls) return this.rootDecls;
    const s = this.options.schemas ?? {};
    const roots = new Map<string, ReturnType<typeof declOf>>();
    for (const name of variableNames(this.options.kind)) roots.set(name, undefined);
    if (this.options.kind === 'schemaRule') {
      const self = declOf(s.object, false);
      roots.set('self', self);
      roots.set('oldSelf', self);
      return (this.rootDecls = roots);
    }
    const object = declOf(s.object, false, false);
    roots.set('object', object);
    roots.set('oldObject', object);
    roots.set('request', declOf(REQUEST_SCHEMA, false, false));
    if (s.params) roots.set('params', declOf(s.params, false, false));
    if (s.namespace) roots.set('namespaceObject', declOf(s.namespace, false, false));
    roots.set('variables', undefined);
    return (this.rootDecls = roots);
  }

  private rootDecls: Roots | undefined;

  /** Object construction: only in the mutating environment, names and fields from the schema. */
  private checkStructs(structs: StructLiteral[]): CelIssue[] {
    const issues: CelIssue[] = [];
    for (const st of structs) {
      if (this.options.kind !== 'mutating') {
        issues.push({ message: `undeclared reference to '${st.typeName}' (in container '')`, start: st.start });
        continue;
      }
      if (st.typeName === 'JSONPatch') {
        for (const f of st.fields) if (!JSONPATCH_FIELDS.has(f.name)) issues.push({ message: `undefined field '${f.name}'`, start: f.start });
        continue;
      }
      const parts = st.typeName.split('.');
      if (parts[0] !== 'Object') {
        issues.push({ message: `undeclared reference to '${st.typeName}' (in container '')`, start: st.start });
        continue;
      }
      const root = this.options.schemas?.object;
      if (!root) continue; // no schema: any field goes
      let s: CelSchema | undefined = root;
      for (const p of parts.slice(1)) {
        s = propertySchema(s, p);
        while (s?.type === 'array') s = s.items;
        if (!s) break;
      }
      if (!s || s.type !== 'object') {
        issues.push({ message: `undeclared reference to '${st.typeName}' (in container '')`, start: st.start });
        continue;
      }
      if (!s.properties || s['x-kubernetes-preserve-unknown-fields']) continue;
      for (const f of st.fields) if (!Object.hasOwn(s.properties, f.name)) issues.push({ message: `undefined field '${f.name}'`, start: f.start });
    }
    return issues;
  }
}

let nextVariablesType = 0;

/**
 * Type-checks an expression with has() as cel-go's (a parse error is thrown, as env.check would
 * report it); the checked tree, its nodes typed, is what the cost is estimated on.
 */
function checkParsed(env: Environment, text: string): { checked: TypeCheckResult; ast: ASTNode } {
  const parsed = env.parse(text);
  kubernetesHas(parsed.ast as ASTNode);
  return { checked: parsed.check(), ast: parsed.ast as ASTNode };
}

/** The library's messages, in cel-go's words where Kubernetes users know them. */
function kubernetesWording(code: string | undefined, summary: string): string {
  const overload = /^no such overload: (.+) (==|!=|<=|>=|<|>|\+|-|\*|\/|%|in) (.+)$/.exec(summary);
  if (overload) return `found no matching overload for '${operatorName(overload[2]!)}' applied to '(${celGoType(overload[1]!)}, ${celGoType(overload[3]!)})'`;
  switch (code) {
    case 'no_such_key': {
      const m = /^No such key: (.*)$/.exec(summary);
      return m ? `undefined field '${m[1]}'` : summary;
    }
    case 'unknown_variable': {
      const m = /^Unknown variable: (.*)$/.exec(summary);
      return m ? `undeclared reference to '${m[1]}' (in container '')` : summary;
    }
    default:
      return summary.split('\n')[0];
  }
}

/** cel-go's name of an operator's function: `_==_`, `@in`. */
const operatorName = (op: string): string => (op === 'in' ? '@in' : `_${op}_`);

/** A type as cel-go prints it: list(int), map(string, int). */
const celGoType = (t: string): string => t.replace(/</g, '(').replace(/>/g, ')');

/** The library's run-time messages, in cel-go's words: a missing key or field, an index past the end. */
function runtimeWording(code: string | undefined, summary: string): string {
  const index = /index out of bounds, index (-?\d+)/.exec(summary);
  if (index) return `index out of bounds: ${index[1]}`;
  const key = code === 'no_such_key' ? /^No such key: (.*)$/.exec(summary.split('\n')[0]!) : null;
  if (key) return `no such key: ${key[1]}`;
  return kubernetesWording(code, summary);
}

class Program implements CelProgram {
  constructor(
    readonly expression: string,
    readonly fieldPath: string,
    readonly resultType: string,
    readonly estimatedCost: number,
    readonly needs: ProgramNeeds,
    private readonly run: ParseResult,
  ) {}

  evaluate(activation: Evaluation): unknown {
    // Without a comprehension step nothing can count toward the bounds or look at the clock, so
    // the meter (a closure and a clock read per evaluation) is left out.
    if (!this.needs.steps) return this.runOn(activation);
    return withBounds(activation.bounds, () => this.runOn(activation));
  }

  private runOn(activation: Evaluation): unknown {
    try {
      return this.run(activation.context as Record<string, unknown>);
    } catch (e) {
      if (e instanceof CelEvaluationError) throw e;
      const err = e as { code?: string; summary?: string; message?: string };
      throw new CelEvaluationError(runtimeWording(err.code, err.summary ?? String(err.message)), err.code ?? 'evaluation_error', { cause: e });
    }
  }
}
