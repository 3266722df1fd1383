/**
 * The values of one admission request, as expressions see them. Everything is lazy and computed at
 * most once per request: converting `object` (by the kind's schema) happens when an expression first
 * reads it, and each `variables.<name>` is evaluated on first use and remembered (its error too), so
 * a variable no expression reads costs nothing and one read by ten expressions runs once.
 *
 * An activation is made per policy, binding and param of every write, so making one must cost next
 * to nothing: the root variables are getters on a class prototype (the library reads them as plain
 * properties), and nothing is computed or allocated until an expression reads it.
 */
import { authorizerValue, type AuthorizerValue, type CelAuthorizer, type CelUserInfo } from './lib/authorizer.js';
import { DEFAULT_COST_LIMIT, DEFAULT_TIMEOUT_MS, type EvaluationBounds } from './budget.js';
import { REQUEST_SCHEMA, type EnvSchemas } from './admission-env.js';
import type { CelSchema } from './schema.js';
import { jsonToCel } from './values.js';

/** Kubernetes' admission request attributes (the `request` variable), as JSON. */
export interface AdmissionRequestAttributes {
  uid?: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  requestKind?: { group: string; version: string; kind: string };
  requestResource?: { group: string; version: string; resource: string };
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  userInfo: CelUserInfo;
  dryRun?: boolean;
  options?: unknown;
}

export interface ActivationInput {
  /** The object being written (null on DELETE), as JSON. */
  object: unknown;
  /** The stored object (null on CREATE), as JSON. */
  oldObject: unknown;
  request: AdmissionRequestAttributes;
  /** The param resource (null when the policy has no paramKind or none was found). */
  params?: unknown;
  /** The namespace of the object (null for cluster-scoped objects). */
  namespaceObject?: unknown;
  /** Answers `authorizer` checks on behalf of request.userInfo. */
  authorizer?: CelAuthorizer;
}

/**
 * Converted values shared by the activations of one request: every policy reads the same object,
 * and converting a 1 KB object costs far more than evaluating an expression on it, so ten policies
 * must not convert it ten times. Only for one request's values, which nothing changes meanwhile.
 */
export class ConvertedValues {
  private readonly byValue = new Map<unknown, Map<CelSchema | undefined, unknown>>();

  get(value: unknown, schema: CelSchema | undefined): unknown {
    let bySchema = this.byValue.get(value);
    if (!bySchema) this.byValue.set(value, (bySchema = new Map()));
    if (!bySchema.has(schema)) bySchema.set(schema, jsonToCel(value, schema));
    return bySchema.get(schema);
  }
}

/**
 * What an activation needs of a policy's variable: a program it evaluates on itself, when an
 * expression first reads the variable (the compiler's CelProgram is one).
 */
export interface VariableProgram {
  evaluate(activation: Activation): unknown;
}

export interface ActivationOptions {
  schemas?: EnvSchemas;
  /** Conversions to share with the request's other activations. */
  converted?: ConvertedValues;
  /** The policy's variables (PolicyCompiler.variables). */
  variables?: ReadonlyMap<string, VariableProgram>;
  bounds?: Partial<EvaluationBounds>;
}

/** The bounds of an activation that sets none: one object for all of them (never changed). */
const DEFAULT_BOUNDS: EvaluationBounds = Object.freeze({ costLimit: DEFAULT_COST_LIMIT, timeoutMs: DEFAULT_TIMEOUT_MS });

const NO_SCHEMAS: EnvSchemas = Object.freeze({});

/** A computed value, or the error computing it threw (thrown again on each read). */
type Memo = { value: unknown } | { error: unknown };

function recall(m: Memo): unknown {
  if ('error' in m) throw m.error;
  return m.value;
}

function remember(compute: () => unknown): Memo {
  try {
    return { value: compute() };
  } catch (error) {
    return { error };
  }
}

export class Activation {
  /** What the library reads: the root variables, as getters. */
  readonly context: ActivationContext;
  readonly bounds: EvaluationBounds;

  constructor(input: ActivationInput, opts: ActivationOptions = {}) {
    this.bounds = opts.bounds ? { costLimit: opts.bounds.costLimit ?? DEFAULT_COST_LIMIT, timeoutMs: opts.bounds.timeoutMs ?? DEFAULT_TIMEOUT_MS } : DEFAULT_BOUNDS;
    this.context = new ActivationContext(this, input, opts);
  }
}

/**
 * The root variables. The library reads the context with `context[name]` and nothing else, so
 * prototype getters serve (its field access on values, which needs own properties, never sees this
 * object). The state is in private fields, which no expression can name.
 */
class ActivationContext {
  readonly #activation: Activation;
  readonly #input: ActivationInput;
  readonly #schemas: EnvSchemas;
  readonly #programs: ReadonlyMap<string, VariableProgram> | undefined;
  /** Without a shared one, this activation's own: each value is still converted once. */
  #converted: ConvertedValues | undefined;
  #authorizer: Memo | undefined;
  #variables: Record<string, unknown> | undefined;

  constructor(activation: Activation, input: ActivationInput, opts: ActivationOptions) {
    this.#activation = activation;
    this.#input = input;
    this.#schemas = opts.schemas ?? NO_SCHEMAS;
    this.#programs = opts.variables;
    this.#converted = opts.converted;
  }

  #convert(value: unknown, schema: CelSchema | undefined): unknown {
    return (this.#converted ??= new ConvertedValues()).get(value ?? null, schema);
  }

  get object(): unknown {
    return this.#convert(this.#input.object, this.#schemas.object);
  }

  get oldObject(): unknown {
    return this.#convert(this.#input.oldObject, this.#schemas.object);
  }

  get request(): unknown {
    return this.#convert(this.#input.request, REQUEST_SCHEMA);
  }

  get params(): unknown {
    return this.#convert(this.#input.params, this.#schemas.params);
  }

  get namespaceObject(): unknown {
    return this.#convert(this.#input.namespaceObject, this.#schemas.namespace);
  }

  get authorizer(): unknown {
    const a = this.#input.authorizer;
    return recall((this.#authorizer ??= remember(() => (a ? authorizerFor(a, this.#input.request) : null))));
  }

  get variables(): Record<string, unknown> {
    return (this.#variables ??= variablesOf(this.#activation, this.#programs));
  }
}

/** What every activation without variables reads as `variables`: nothing can change it. */
const NO_VARIABLES: Record<string, unknown> = Object.freeze(Object.create(null));

/** Where the getters of a `variables` object find their activation and memos; no expression can name a symbol. */
const VARIABLE_STATE = Symbol('variables');

interface VariableState {
  activation: Activation;
  programs: ReadonlyMap<string, VariableProgram>;
  memos: Map<string, Memo>;
}

/**
 * The getters of one policy's `variables`, made once per variables map. The library reads a field
 * of a value only when it is an own property of a plain object, so each activation's `variables`
 * gets them as own properties, in one call, without a closure per variable.
 */
const variableGetters = new WeakMap<ReadonlyMap<string, VariableProgram>, PropertyDescriptorMap>();

function gettersOf(programs: ReadonlyMap<string, VariableProgram>): PropertyDescriptorMap {
  let getters = variableGetters.get(programs);
  if (!getters) {
    getters = {};
    for (const name of programs.keys()) {
      getters[name] = {
        enumerable: true,
        get(this: { [VARIABLE_STATE]: VariableState }) {
          const s = this[VARIABLE_STATE];
          let memo = s.memos.get(name);
          if (!memo) s.memos.set(name, (memo = remember(() => s.programs.get(name)!.evaluate(s.activation))));
          return recall(memo);
        },
      };
    }
    variableGetters.set(programs, getters);
  }
  return getters;
}

function variablesOf(activation: Activation, programs: ReadonlyMap<string, VariableProgram> | undefined): Record<string, unknown> {
  if (!programs || programs.size === 0) return NO_VARIABLES;
  const vars = Object.create(null, gettersOf(programs)) as Record<string | symbol, unknown>;
  const state: VariableState = { activation, programs, memos: new Map() };
  Object.defineProperty(vars, VARIABLE_STATE, { value: state });
  return vars;
}

function authorizerFor(a: CelAuthorizer, r: AdmissionRequestAttributes): AuthorizerValue {
  return authorizerValue(a, r.userInfo, {
    group: r.resource.group,
    version: r.resource.version,
    resource: r.resource.resource,
    subresource: r.subResource,
    namespace: r.namespace,
    name: r.name,
  });
}

export type { CelSchema };
