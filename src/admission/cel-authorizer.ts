/**
 * The `authorizer` of admission expressions, answered by the server's authorizer chain for the
 * requesting user.
 *
 * CEL evaluation is synchronous, but a webhook authorizer may have to go over the network. So the
 * admission of one request runs in rounds: evaluate everything; a check the chain answers at once
 * (AlwaysAllow, RBAC, a cached or skipped webhook, system:masters) is used as it is; a check that
 * needs a call gets a placeholder and its promise is kept. If any were kept, the round's outcome is
 * thrown away, the calls are awaited (in parallel) and remembered for this request, and the
 * evaluation runs again. A later round may reach checks the earlier one did not (`a && b` asks b
 * only once a is allowed), so rounds repeat until one completes, at most MAX_ROUNDS; past that,
 * checks still unanswered are errors (`errored()` is true) and that round is final. A request whose
 * checks are all answered at once evaluates once, as before.
 */
import type { AuthorizationAttributes, AuthorizationDecision, Authorizer, CelAuthorizer } from '../cel/index.js';

/** Distinct rounds of network checks one admission may wait for. */
export const MAX_ROUNDS = 8;

const PENDING: AuthorizationDecision = { decision: 'noOpinion', error: 'authorization decision pending' };
const GAVE_UP: AuthorizationDecision = { decision: 'noOpinion', error: `authorization decision not reached in ${MAX_ROUNDS} rounds of checks` };

class RoundAuthorizer implements CelAuthorizer {
  private readonly answers = new Map<string, AuthorizationDecision>();
  readonly pending = new Map<string, Promise<AuthorizationDecision>>();
  /** Set for the last round: nothing more is awaited. */
  final = false;

  constructor(private readonly chain: Authorizer) {}

  authorize(attributes: AuthorizationAttributes): AuthorizationDecision {
    const key = JSON.stringify(attributes);
    const known = this.answers.get(key);
    if (known) return known;
    if (this.final) return GAVE_UP;
    const d = this.chain.authorize(attributes);
    if (!('then' in d)) {
      this.answers.set(key, d);
      return d;
    }
    this.pending.set(key, d);
    return PENDING;
  }

  async settle(): Promise<void> {
    const waiting = [...this.pending];
    this.pending.clear();
    const decided = await Promise.all(waiting.map(([, p]) => p.catch((err: unknown): AuthorizationDecision => ({ decision: 'noOpinion', error: String(err) }))));
    waiting.forEach(([key], i) => this.answers.set(key, decided[i]));
  }
}

/** Runs `evaluate` with an authorizer for the expressions until a round needs no network answer. */
export async function evaluateWithAuthorizer<T>(chain: Authorizer, evaluate: (authorizer: CelAuthorizer) => T): Promise<T> {
  const authorizer = new RoundAuthorizer(chain);
  for (let round = 1; ; round++) {
    authorizer.final = round === MAX_ROUNDS;
    const outcome = evaluate(authorizer);
    if (authorizer.pending.size === 0) return outcome;
    await authorizer.settle();
  }
}

const NOT_CACHED: AuthorizationDecision = { decision: 'noOpinion', error: 'authorization decision not available yet: a webhook authorizer is being asked' };

/**
 * The `authorizer` of a mutating policy's expressions. Mutations are applied one after another to
 * the object, so they are not re-run in rounds as validations are: a check the chain answers at
 * once (RBAC, AlwaysAllow/AlwaysDeny, a cached or skipped webhook, system:masters) is used as it is;
 * one that needs a webhook call is an error for this request (`errored()` is true, failurePolicy
 * governs an expression that fails on it) while the call goes on and fills the webhook's cache.
 */
export function immediateAuthorizer(chain: Authorizer): CelAuthorizer {
  return {
    authorize(attributes) {
      const d = chain.authorize(attributes);
      if (!('then' in d)) return d;
      d.catch(() => undefined);
      return NOT_CACHED;
    },
  };
}
