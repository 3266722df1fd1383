/**
 * The MutatingAdmissionWebhook plugin, as Kubernetes' mutating dispatcher runs it. For each webhook
 * in order (configurations by name, then their webhooks):
 *
 *   1. is it called? namespaceSelector, objectSelector, then rules (for matchPolicy Equivalent,
 *      also another served version of the kind, which the webhook then sees), then matchConditions
 *      (an error refuses the request under Fail and skips the webhook under Ignore);
 *   2. on a dry run, a webhook whose sideEffects is not None or NoneOnDryRun refuses the request;
 *   3. an AdmissionReview is POSTed; warnings become Warning headers; allowed: false refuses the
 *      request with the webhook's status; a JSONPatch is applied to the object (defaults applied
 *      again) and the next webhook sees the result. DELETE objects cannot be patched.
 *
 * A call that fails (connection, timeout, bad answer) is skipped under failurePolicy Ignore and
 * refuses the request under Fail. In the reinvocation round, webhooks with reinvocationPolicy
 * IfNeeded run again when the object changed after they ran (by a later webhook, or by another
 * plugin since this one last ran); a webhook never runs for the first time in that round.
 * Kubernetes never calls webhooks for the admissionregistration kinds themselves.
 */
import { randomUUID } from 'node:crypto';
import { Activation } from '../cel/index.js';
import { AdmissionError, forbidden, internal as internalError } from './errors.js';
import { qualified } from '../api/qualified.js';
import { PatchError } from '../patch/errors.js';
import { applyJsonPatch } from '../patch/json-patch.js';
import { isObject, jsonEqual, listAt, stringAt, stringsOf } from '../api/json-access.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';
import type { StoreReads } from '../store/store.js';
import { admissionReview, asVersion, reviewVersionFor, verifyAdmissionResponse, type Invocation } from './admission-review.js';
import { withObject, type AdmissionAttributes } from './attributes.js';
import { errorText, matchConditionsOutcome } from './policy-evaluation.js';
import { ruleMatches, selectorsMatch, type Operation } from './matching.js';
import { isAdmissionConfigurationKind } from './policy-dispatch.js';
import type { MutatingPass, MutatingPlugin } from './mutation.js';
import { currentAdmissionContext } from './request-context.js';
import { CallFailure, WebhookClient, type WebhookClientOptions } from './webhook-client.js';
import { WebhookCallError, dryRunUnsupported, webhookDenial } from './webhook-errors.js';
import { WebhookSource, type WebhookEntry } from './webhook-source.js';

export interface WebhookAdmissionOptions extends WebhookClientOptions {
  /** A call failed and failurePolicy Ignore let the request go on (Kubernetes logs it). */
  onFailOpen?: (webhook: string, error: string) => void;
}

const DEFAULT_TIMEOUT_SECONDS = 10;
const NO_SIDE_EFFECTS = ['None', 'NoneOnDryRun'];

export class MutatingWebhooks implements MutatingPlugin {
  private readonly source: WebhookSource;
  private readonly client: WebhookClient;

  constructor(
    store: StoreReads,
    configurationKind: KindStrategy,
    private readonly opts: WebhookAdmissionOptions = {},
  ) {
    this.source = new WebhookSource(store, configurationKind);
    this.client = new WebhookClient(opts);
  }

  failedOpen(e: WebhookCallError): void {
    this.opts.onFailOpen?.(e.webhook, e.message);
  }

  begin(_operation: Operation, kind: KindStrategy): MutatingPass | undefined {
    if (isAdmissionConfigurationKind(kind)) return undefined;
    const hooks = this.source.current();
    return hooks.length === 0 ? undefined : new WebhookPass(this, hooks);
  }

  /**
   * Whether the webhook is called for this request, and for which version (Kubernetes'
   * ShouldCallHook). A selector that cannot be read, or matchConditions that fail under Fail,
   * refuse the request, but only once the rules match.
   */
  invocation(e: WebhookEntry, a: AdmissionAttributes): Invocation | undefined {
    let selectorError: unknown;
    try {
      if (!selectorsMatch(e.hook, a.match)) return undefined;
    } catch (err) {
      selectorError = err;
    }
    const rules = listAt(e.hook, 'rules');
    let version = rules.some((r) => ruleMatches(r, a.match)) ? a.version : undefined;
    if (version === undefined && stringAt(e.hook, 'matchPolicy') !== 'Exact') {
      // Earlier rules first, as Kubernetes honors them, each against the other served versions.
      const others = a.kind.versions.filter((v) => v !== a.version);
      for (const r of rules) {
        version = others.find((v) => ruleMatches(r, { ...a.match, version: v }));
        if (version !== undefined) break;
      }
    }
    if (version === undefined) return undefined;
    if (selectorError !== undefined) throw internalError(errorText(selectorError));
    const conditions = this.source.conditions(e, a.kind);
    if (conditions.length > 0) {
      const act = new Activation(
        { object: a.object && asVersion(a.object, a.kind, version), oldObject: a.oldObject && asVersion(a.oldObject, a.kind, version), request: a.request },
        { schemas: { object: a.kind.schema } },
      );
      const r = matchConditionsOutcome(conditions, act);
      if ('error' in r) {
        if (stringAt(e.hook, 'failurePolicy') === 'Ignore') return undefined;
        throw forbidden(qualified(a.kind, a.name), r.error);
      }
      if (!r.matches) return undefined;
    }
    return { kind: a.kind, version };
  }

  /** Calls one webhook; the object as it patched it (the same one when it did not). */
  async call(e: WebhookEntry, inv: Invocation, a: AdmissionAttributes, object: KubeObject | null): Promise<KubeObject | null> {
    const name = stringAt(e.hook, 'name');
    if (a.dryRun && !NO_SIDE_EFFECTS.includes(stringAt(e.hook, 'sideEffects'))) throw dryRunUnsupported(name);
    const version = reviewVersionFor(stringsOf(listAt(e.hook, 'admissionReviewVersions')));
    if (!version) throw new WebhookCallError(name, 'could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)');
    const uid = randomUUID();
    const timeout = isObject(e.hook) && typeof e.hook.timeoutSeconds === 'number' ? e.hook.timeoutSeconds : DEFAULT_TIMEOUT_SECONDS;
    let answer: unknown;
    try {
      answer = await this.client.post(e.hook.clientConfig, admissionReview(version, uid, inv, a, object), timeout);
    } catch (err) {
      if (err instanceof CallFailure) throw new WebhookCallError(name, err.message);
      throw err;
    }
    let response;
    try {
      response = verifyAdmissionResponse(version, uid, answer);
    } catch (err) {
      throw new WebhookCallError(name, `received invalid webhook response: ${errorText(err)}`);
    }
    currentAdmissionContext().warn(response.warnings);
    if (!response.allowed) throw webhookDenial(name, response.result);
    if (!response.patch) return object;
    let patch: unknown;
    try {
      patch = JSON.parse(response.patch.toString('utf8'));
    } catch (err) {
      throw new WebhookCallError(name, `received undecodable patch in webhook response: ${errorText(err)}`);
    }
    if (!Array.isArray(patch)) throw new WebhookCallError(name, 'received undecodable patch in webhook response: json: cannot unmarshal object into Go value of type jsonpatch.Patch');
    if (patch.length === 0) return object;
    if (object === null) throw internalError(`admission webhook "${name}" attempted to modify the object, which is not supported for this operation`);
    if (response.patchType !== 'JSONPatch') throw new WebhookCallError(name, `unsupported patch type "${response.patchType}"`);
    let patched: unknown;
    try {
      patched = applyJsonPatch(asVersion(object, inv.kind, inv.version), patch);
    } catch (err) {
      if (err instanceof PatchError && err.code === 'BadPatch') throw new WebhookCallError(name, `received undecodable patch in webhook response: ${err.message}`);
      throw internalError(errorText(err));
    }
    if (!isObject(patched) || !isObject(patched.metadata)) throw internalError(`admission webhook "${name}" returned a patch that leaves no object`);
    const result = asVersion(patched as KubeObject, a.kind, a.version);
    a.kind.applyDefaults(result);
    return result;
  }
}

/** One request's calls: who ran, what they produced, who must run again. */
class WebhookPass implements MutatingPass {
  /** The object as this plugin last returned it. */
  private lastOutput: KubeObject | null | undefined;
  /** IfNeeded webhooks that ran since the object last changed. */
  private invoked = new Set<string>();
  /** Webhooks to run in the reinvocation round. */
  private readonly reinvoke = new Set<string>();

  constructor(
    private readonly plugin: MutatingWebhooks,
    private readonly hooks: readonly WebhookEntry[],
  ) {}

  private objectChanged(): void {
    for (const uid of this.invoked) this.reinvoke.add(uid);
    this.invoked = new Set();
  }

  async run(attrs: AdmissionAttributes, object: KubeObject, reinvocation: boolean): Promise<KubeObject> {
    const input = attrs.operation === 'DELETE' ? null : object;
    if (reinvocation && this.lastOutput !== undefined && !jsonEqual(this.lastOutput, input)) this.objectChanged();
    let current = input;
    try {
      for (const e of this.hooks) {
        const a = current === null ? attrs : withObject(attrs, current);
        const inv = this.plugin.invocation(e, a);
        if (!inv || (reinvocation && !this.reinvoke.has(e.uid))) continue;
        let failure: unknown;
        try {
          const next = await this.plugin.call(e, inv, a, current);
          if (next !== current && !jsonEqual(next, current)) this.objectChanged();
          current = next;
        } catch (err) {
          failure = err;
        }
        // Registered after the change it made: a webhook is not rerun for its own patch.
        if (stringAt(e.hook, 'reinvocationPolicy') === 'IfNeeded') this.invoked.add(e.uid);
        if (failure === undefined) continue;
        if (failure instanceof WebhookCallError) {
          if (stringAt(e.hook, 'failurePolicy') !== 'Ignore') throw internalError(failure.message);
          this.plugin.failedOpen(failure);
          continue;
        }
        if (failure instanceof AdmissionError) throw failure;
        throw internalError(errorText(failure));
      }
    } finally {
      this.lastOutput = current;
    }
    return current ?? object;
  }
}
