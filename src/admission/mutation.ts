/**
 * Mutating admission, as Kubernetes' admission chain runs it: every mutating plugin in order
 * (MutatingAdmissionPolicy, then MutatingAdmissionWebhook), each hook of a plugin in its own
 * order, then one reinvocation round in which a plugin re-runs its hooks whose
 * reinvocationPolicy is IfNeeded and whose output was changed by a later hook. A hook runs at most
 * twice per request.
 */
import type { KubeObject } from '../resources/types.js';
import { withObject, type AdmissionAttributes } from './attributes.js';

/** One request's run of a plugin: keeps what it needs to know for the reinvocation round. */
export interface MutatingPass {
  /**
   * Runs the plugin's matching hooks on the object and returns the result (the same object when
   * nothing changed). With reinvocation, only hooks with reinvocationPolicy IfNeeded whose output
   * differs from the current object run. Throws an ApiError to refuse the request.
   */
  run(attrs: AdmissionAttributes, object: KubeObject, reinvocation: boolean): Promise<KubeObject>;
}

export interface MutatingPlugin {
  /** A pass for this request; undefined when none of the plugin's hooks can apply (cheap check). */
  begin(attrs: AdmissionAttributes): MutatingPass | undefined;
}

export async function runMutatingPlugins(plugins: readonly MutatingPlugin[], attrs: AdmissionAttributes, object: KubeObject): Promise<KubeObject> {
  const passes = plugins.map((p) => p.begin(attrs)).filter((p): p is MutatingPass => p !== undefined);
  if (passes.length === 0) return object;
  let current = object;
  for (const reinvocation of [false, true]) {
    for (const pass of passes) current = await pass.run(withObject(attrs, current), current, reinvocation);
  }
  return current;
}
