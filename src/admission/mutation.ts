/**
 * Mutating admission, as Kubernetes' admission chain runs it: every mutating plugin in order
 * (MutatingAdmissionPolicy, then MutatingAdmissionWebhook), each hook of a plugin in its own
 * order, then one reinvocation round in which a plugin re-runs its hooks whose
 * reinvocationPolicy is IfNeeded and whose output was changed by a later hook. A hook runs at most
 * twice per request.
 */
import type { KubeObject } from '../api/types.js';
import type { KindStrategy } from '../api/strategy.js';
import { withObject, type AdmissionAttributes } from './attributes.js';
import type { Operation } from './matching.js';

/** One request's run of a plugin: keeps what it needs to know for the reinvocation round. */
export interface MutatingPass {
  /**
   * Runs the plugin's matching hooks on the object and returns the result (the same object when
   * nothing changed). With reinvocation, only hooks with reinvocationPolicy IfNeeded whose output
   * differs from the current object run. Throws an AdmissionError to refuse the request.
   */
  run(attrs: AdmissionAttributes, object: KubeObject, reinvocation: boolean): Promise<KubeObject>;
}

export interface MutatingPlugin {
  /**
   * A pass for this request; undefined when none of the plugin's hooks can apply. Decided from the
   * operation and kind alone, so that a write no hook can see never computes its attributes.
   */
  begin(operation: Operation, kind: KindStrategy): MutatingPass | undefined;
}

/** Runs the plugins on object; attributes() is called only when one of them applies. */
export function runMutatingPlugins(plugins: readonly MutatingPlugin[], operation: Operation, kind: KindStrategy, attributes: () => AdmissionAttributes, object: KubeObject): Promise<KubeObject> {
  return runPasses(beginPlugins(plugins, operation, kind), attributes, object);
}

/** The passes of the plugins that can apply to this operation on this kind. */
export const beginPlugins = (plugins: readonly MutatingPlugin[], operation: Operation, kind: KindStrategy): MutatingPass[] =>
  plugins.map((p) => p.begin(operation, kind)).filter((p): p is MutatingPass => p !== undefined);

/** Runs the passes begun (beginPlugins) on object, with one reinvocation round. */
export async function runPasses(passes: readonly MutatingPass[], attributes: () => AdmissionAttributes, object: KubeObject): Promise<KubeObject> {
  if (passes.length === 0) return object;
  const attrs = attributes();
  let current = object;
  for (const reinvocation of [false, true]) {
    for (const pass of passes) current = await pass.run(withObject(attrs, current), current, reinvocation);
  }
  return current;
}
