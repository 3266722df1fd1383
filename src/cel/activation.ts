/**
 * The values of one admission request, as expressions see them. Everything is lazy and computed at
 * most once per request: converting `object` (by the kind's schema) happens when an expression first
 * reads it, and each `variables.<name>` is evaluated on first use and remembered (its error too), so
 * a variable no expression reads costs nothing and one read by ten expressions runs once.
 */
import { authorizerValue, type AuthorizerValue, type CelAuthorizer, type CelUserInfo } from './lib/authorizer.js';
import { DEFAULT_COST_LIMIT, DEFAULT_TIMEOUT_MS, type EvaluationBounds } from './budget.js';
import type { CelProgram } from './compiler.js';
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

export interface ActivationOptions {
  schemas?: EnvSchemas;
  /** Conversions to share with the request's other activations. */
  converted?: ConvertedValues;
  /** The policy's variables (PolicyCompiler.variables). */
  variables?: ReadonlyMap<string, CelProgram>;
  bounds?: Partial<EvaluationBounds>;
}

export class Activation {
  /** What the library reads: memoizing getters, one per variable. */
  readonly context: Record<string, unknown>;
  readonly bounds: EvaluationBounds;

  constructor(input: ActivationInput, opts: ActivationOptions = {}) {
    this.bounds = { costLimit: opts.bounds?.costLimit ?? DEFAULT_COST_LIMIT, timeoutMs: opts.bounds?.timeoutMs ?? DEFAULT_TIMEOUT_MS };
    const s = opts.schemas ?? {};
    const shared = opts.converted;
    const convert = (value: unknown, schema: CelSchema | undefined) => (shared && value !== null ? shared.get(value, schema) : jsonToCel(value, schema));
    const ctx: Record<string, unknown> = Object.create(null);
    lazy(ctx, 'object', () => convert(input.object ?? null, s.object));
    lazy(ctx, 'oldObject', () => convert(input.oldObject ?? null, s.object));
    lazy(ctx, 'request', () => convert(input.request, REQUEST_SCHEMA));
    lazy(ctx, 'params', () => convert(input.params ?? null, s.params));
    lazy(ctx, 'namespaceObject', () => convert(input.namespaceObject ?? null, s.namespace));
    lazy(ctx, 'authorizer', () => (input.authorizer ? authorizerFor(input.authorizer, input.request) : null));
    const vars: Record<string, unknown> = Object.create(null);
    for (const [name, program] of opts.variables ?? []) lazy(vars, name, () => program.evaluate(this));
    ctx.variables = vars;
    this.context = ctx;
  }
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

/** A getter that computes once; a thrown error is remembered and thrown again on each read. */
function lazy(target: Record<string, unknown>, name: string, compute: () => unknown): void {
  let state: { value: unknown } | { error: unknown } | undefined;
  Object.defineProperty(target, name, {
    enumerable: true,
    configurable: false,
    get() {
      if (!state) {
        try {
          state = { value: compute() };
        } catch (error) {
          state = { error };
        }
      }
      if ('error' in state) throw state.error;
      return state.value;
    },
  });
}

export type { CelSchema };
