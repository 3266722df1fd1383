/**
 * The authorizer chain of an AuthorizationConfiguration, as kube-apiserver builds it: the
 * privileged group `system:masters` is allowed first, then the configured authorizers in order.
 * The first Allow or Deny decides; NoOpinion goes on to the next; at the end nobody allowed, and
 * the request is refused with the reasons given on the way (Kubernetes' union authorizer).
 *
 * An authorizer's error travels with its decision: a request that ends un-allowed with an error
 * is answered 500 by the server, as Kubernetes' authorization filter answers it.
 *
 * AlwaysDeny has, as in Kubernetes, no opinion ("Everything is forbidden."): it refuses only when
 * nothing after it allows.
 *
 * The chain answers synchronously as long as every authorizer it asks does (AlwaysAllow,
 * AlwaysDeny, RBAC, a webhook answering from its cache or skipped by its match conditions), and
 * returns a promise only from the first one that goes over the network.
 */
import type { AuthorizationConfiguration, AuthorizerConfiguration, AuthorizerType } from '../config/authorization.js';
import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from '../api/authorization.js';
import { WebhookAuthorizer, type WebhookDeps } from './webhook-authorizer.js';
import type { Sample } from '../observability/samples.js';

export const PRIVILEGED_GROUP = 'system:masters';

export const alwaysAllow: Authorizer = { authorize: () => ({ decision: 'allow' }) };
export const alwaysDeny: Authorizer = { authorize: () => ({ decision: 'noOpinion', reason: 'Everything is forbidden.' }) };

export interface ChainDeps extends WebhookDeps {
  /** The server's one RBAC authorizer, shared by every chain a reload builds (as in Kubernetes). */
  rbac?: Authorizer;
}

type Build = (a: AuthorizerConfiguration, path: string, deps: ChainDeps) => Authorizer;

const unavailable = (type: string, path: string): never => {
  throw new Error(`${path}.type: Unsupported value: "${type}": ${type} authorizer not available`);
};

const builders: Record<AuthorizerType, Build> = {
  AlwaysAllow: () => alwaysAllow,
  AlwaysDeny: () => alwaysDeny,
  RBAC: (a, path, deps) => deps.rbac ?? unavailable(a.type, path),
  Webhook: (a, path, deps) => new WebhookAuthorizer(a.name, a, path, deps),
};

interface Link {
  type: AuthorizerType;
  name: string;
  authorizer: Authorizer;
  /** Decisions by outcome (Kubernetes' apiserver_authorization_decisions_total). */
  decisions: Record<AuthorizationDecision['decision'], number>;
}

const isPromise = <T>(v: T | Promise<T>): v is Promise<T> => typeof (v as { then?: unknown } | undefined)?.then === 'function';

export class AuthorizerChain implements Authorizer {
  constructor(private readonly links: readonly Link[]) {}

  /** The configured authorizer types, in order. */
  get types(): AuthorizerType[] {
    return this.links.map((l) => l.type);
  }

  authorize(attributes: AuthorizationAttributes): AuthorizationDecision | Promise<AuthorizationDecision> {
    if (attributes.user.groups?.includes(PRIVILEGED_GROUP)) return { decision: 'allow' };
    return this.from(0, attributes, [], []);
  }

  /** Asks the links from index `i` on, synchronously until one answers with a promise. */
  private from(i: number, attributes: AuthorizationAttributes, reasons: string[], errors: string[]): AuthorizationDecision | Promise<AuthorizationDecision> {
    for (; i < this.links.length; i++) {
      const link = this.links[i];
      const answer = link.authorizer.authorize(attributes);
      if (isPromise(answer)) {
        const next = i + 1;
        return answer.then((d) => this.step(link, d, reasons, errors) ?? this.from(next, attributes, reasons, errors));
      }
      const decided = this.step(link, answer, reasons, errors);
      if (decided) return decided;
    }
    return { decision: 'noOpinion', ...(reasons.length > 0 ? { reason: reasons.join('\n') } : {}), ...(errors.length > 0 ? { error: errors.join(', ') } : {}) };
  }

  /** The chain's answer when this link decides; otherwise records its reason and error and returns undefined. */
  private step(link: Link, d: AuthorizationDecision, reasons: string[], errors: string[]): AuthorizationDecision | undefined {
    link.decisions[d.decision]++;
    if (d.decision !== 'noOpinion') return d;
    if (d.reason) reasons.push(d.reason);
    if (d.error) errors.push(d.error);
    return undefined;
  }

  close(): void {
    for (const l of this.links) if (l.authorizer instanceof WebhookAuthorizer) l.authorizer.close();
  }

  /** Decisions by authorizer, and each webhook's cache and calls, for /metrics. */
  samples(): Sample[] {
    const out: Sample[] = [];
    const counter = (name: string, help: string, labels: Record<string, string>, value: number) => out.push({ name, help, type: 'counter', labels, value });
    for (const { type, name, decisions } of this.links) {
      for (const [decision, n] of Object.entries(decisions)) counter('orchd_authorization_decisions_total', 'Decisions by authorizer of the chain.', { type, name, decision }, n);
    }
    for (const { authorizer: a } of this.links) {
      if (!(a instanceof WebhookAuthorizer)) continue;
      const name = { name: a.name };
      counter('orchd_authorization_webhook_cache_hits_total', "Decisions answered from a webhook authorizer's cache.", name, a.counters.cacheHits);
      counter('orchd_authorization_webhook_cache_misses_total', "Decisions a webhook authorizer's cache did not have.", name, a.counters.cacheMisses);
      counter('orchd_authorization_webhook_match_condition_exclusions_total', "Requests a webhook authorizer's matchConditions left out.", name, a.counters.skipped);
      for (const [result, n] of Object.entries(a.counters.calls)) counter('orchd_authorization_webhook_evaluations_total', 'Calls to a webhook authorizer by result.', { ...name, result }, n);
    }
    return out;
  }
}

/**
 * Builds the chain of a configuration; no configuration is kube-apiserver's default, AlwaysAllow.
 * Throws one problem a line (`authorizers[1].webhook.matchConditions[0].expression: …`) when an
 * authorizer cannot be built.
 */
export function buildAuthorizationChain(config: AuthorizationConfiguration | undefined, deps: ChainDeps): AuthorizerChain {
  const authorizers = config?.authorizers ?? [{ type: 'AlwaysAllow', name: 'always-allow' }];
  const links: Link[] = [];
  const problems: string[] = [];
  authorizers.forEach((a, i) => {
    try {
      links.push({ type: a.type, name: a.name, authorizer: builders[a.type](a, `authorizers[${i}]`, deps), decisions: { allow: 0, deny: 0, noOpinion: 0 } });
    } catch (err) {
      problems.push(...(err as Error).message.split('\n'));
    }
  });
  if (problems.length > 0) {
    new AuthorizerChain(links).close();
    throw new Error(problems.join('\n'));
  }
  return new AuthorizerChain(links);
}
