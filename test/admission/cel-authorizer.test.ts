/**
 * The rounds that let synchronous CEL use an authorizer that may answer asynchronously: checks the
 * chain answers at once cost one evaluation; a check that needs a call is awaited and the
 * evaluation repeated; checks reached only after earlier answers take further rounds; each distinct
 * check reaches the chain once per admission; past MAX_ROUNDS the unanswered checks are errors.
 */
import { describe, expect, it } from 'vitest';
import { MAX_ROUNDS, evaluateWithAuthorizer, immediateAuthorizer } from '../../src/admission/cel-authorizer.js';
import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from '../../src/api/authorization.js';
import type { CelAuthorizer } from '../../src/cel/index.js';

/** Answers `get` synchronously and everything else a tick later, allowing only the verbs in `allowed`. */
class SlowForWrites implements Authorizer {
  readonly asked: string[] = [];
  constructor(private readonly allowed: Set<string>) {}
  authorize(a: AuthorizationAttributes): AuthorizationDecision | Promise<AuthorizationDecision> {
    this.asked.push(a.verb);
    const d: AuthorizationDecision = { decision: this.allowed.has(a.verb) ? 'allow' : 'noOpinion' };
    return a.verb === 'get' ? d : new Promise((resolve) => setTimeout(() => resolve(d), 1));
  }
}

const check = (az: CelAuthorizer, verb: string) => az.authorize({ user: { username: 'u' }, verb, isResourceRequest: true, resource: 'events', namespace: 'default' }).decision === 'allow';

describe('evaluating with an authorizer', () => {
  it('evaluates once when every check is answered at once', async () => {
    const chain = new SlowForWrites(new Set(['get']));
    let evaluations = 0;
    const out = await evaluateWithAuthorizer(chain, (az) => (evaluations++, check(az, 'get')));
    expect(out).toBe(true);
    expect(evaluations).toBe(1);
  });

  it('awaits checks that need a call, in as many rounds as the expression reaches new ones, asking each once', async () => {
    const chain = new SlowForWrites(new Set(['get', 'create', 'update']));
    let evaluations = 0;
    // `create && update && delete`: update is asked only once create is known to be allowed.
    const out = await evaluateWithAuthorizer(chain, (az) => (evaluations++, check(az, 'create') && check(az, 'update') && check(az, 'delete')));
    expect(out).toBe(false);
    expect(evaluations).toBe(4);
    expect(chain.asked).toEqual(['create', 'update', 'delete']);
  });

  it(`gives up after ${MAX_ROUNDS} rounds: the checks still unanswered are errors`, async () => {
    const chain = new SlowForWrites(new Set());
    let n = 0;
    const decisions: AuthorizationDecision[] = [];
    await evaluateWithAuthorizer(chain, (az) => {
      decisions.length = 0;
      // Every round reaches a check no earlier round asked.
      for (let i = 0; i <= n; i++) decisions.push(az.authorize({ user: { username: 'u' }, verb: `verb-${i}`, isResourceRequest: true }));
      n++;
    });
    expect(n).toBe(MAX_ROUNDS);
    expect(chain.asked).toHaveLength(MAX_ROUNDS - 1);
    expect(decisions.at(-1)).toEqual({ decision: 'noOpinion', error: `authorization decision not reached in ${MAX_ROUNDS} rounds of checks` });
    expect(decisions[0]).toEqual({ decision: 'noOpinion' });
  });
});

describe('the authorizer of mutating policies', () => {
  it('uses what the chain answers at once; a check that needs a call is an error while the call fills the cache', async () => {
    const chain = new SlowForWrites(new Set(['get', 'create']));
    const az = immediateAuthorizer(chain);
    expect(az.authorize({ user: { username: 'u' }, verb: 'get', isResourceRequest: true })).toEqual({ decision: 'allow' });
    expect(az.authorize({ user: { username: 'u' }, verb: 'create', isResourceRequest: true })).toEqual({
      decision: 'noOpinion',
      error: 'authorization decision not available yet: a webhook authorizer is being asked',
    });
    expect(chain.asked).toEqual(['get', 'create']);
  });
});
