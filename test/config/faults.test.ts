/** FaultConfiguration as a file, a PUT body and the embedded form read it: one line naming the field path, or the rules. */
import { describe, expect, it } from 'vitest';
import { parseFaultObject, parseFaultText } from '../../src/config/faults.js';

const doc = (rules: unknown[], extra: Record<string, unknown> = {}) => JSON.stringify({ apiVersion: 'apiserver.config.orch.io/v1alpha1', kind: 'FaultConfiguration', seed: 7, rules, ...extra });

describe('FaultConfiguration', () => {
  it("reads the issue's file, YAML", () => {
    const r = parseFaultText(`apiVersion: apiserver.config.orch.io/v1alpha1
kind: FaultConfiguration
seed: 7
rules:
- name: conflicts
  match: { verbs: [update, patch], resources: [widgets.demo.example.com], namespaces: [default] }
  probability: 0.3
  inject: { status: 409 }
- match: { verbs: [watch] }
  after: { events: 5 }
  inject: { watch: expire }
- match: { verbs: [list] }
  inject: { staleRead: { maxVersionsBehind: 3 }, latencyMs: [10, 20] }
`);
    expect(r).toEqual({
      ok: true,
      value: {
        seed: 7,
        rules: [
          { name: 'conflicts', match: { verbs: ['update', 'patch'], resources: ['widgets.demo.example.com'], namespaces: ['default'] }, probability: 0.3, inject: { status: 409 } },
          { match: { verbs: ['watch'] }, after: { events: 5 }, inject: { watch: 'expire' } },
          { match: { verbs: ['list'] }, inject: { staleRead: { maxVersionsBehind: 3 }, latencyMs: [10, 20] } },
        ],
      },
    });
  });

  const refused: [string, unknown[], string][] = [
    ['an unknown field', [{ match: {}, inject: { status: 409 }, probabilty: 0.5 }], 'rules[0].probabilty: Forbidden: unknown field in apiserver.config.orch.io/v1alpha1 FaultConfiguration'],
    ['a probability above 1', [{ probability: 1.5, inject: { status: 409 } }], 'rules[0].probability: Invalid value: 1.5: must be between 0 and 1'],
    ['a negative probability', [{ probability: -0.1, inject: { status: 409 } }], 'rules[0].probability: Invalid value: -0.1: must be between 0 and 1'],
    [
      'watch: expire on a create',
      [{ match: { verbs: ['create'] }, inject: { watch: 'expire' } }],
      'rules[0].inject.watch: Invalid value: "expire": acts only on watch, and match.verbs [create] holds none of them: the rule could never act',
    ],
    [
      'commitThenDrop on a get',
      [{ match: { verbs: ['get'] }, inject: { commitThenDrop: true } }],
      'rules[0].inject.commitThenDrop: Invalid value: true: acts only on create, update, patch, delete, deletecollection, and match.verbs [get] holds none of them: the rule could never act',
    ],
    [
      'after.events on a list',
      [{ match: { verbs: ['list'] }, after: { events: 3 }, inject: { status: 500 } }],
      'rules[0].after.events: Invalid value: 3: acts only on watch, and match.verbs [list] holds none of them: the rule could never act',
    ],
    ['a status kube-apiserver does not inject', [{ inject: { status: 418 } }], 'rules[0].inject.status: Unsupported value: 418: supported values: "409", "429", "500", "503", "504"'],
    ['an unknown verb', [{ match: { verbs: ['get', 'escalate'] }, inject: { status: 500 } }], 'rules[0].match.verbs[1]: Unsupported value: "escalate"'],
    ['no fault', [{ match: {} }], 'rules[0].inject: Required value: one of status, latencyMs, watch, commitThenDrop, staleRead'],
    ['two faults', [{ inject: { status: 409, commitThenDrop: true } }], 'rules[0].inject.commitThenDrop: Forbidden: may not be combined with status: a rule injects one fault'],
    ['lag without a delay', [{ inject: { watch: 'lag' } }], 'rules[0].inject.latencyMs: Required value: watch: lag delays events by latencyMs'],
    ['a range upside down', [{ inject: { latencyMs: [300, 100] } }], 'rules[0].inject.latencyMs: Invalid value'],
    ['two ways to hit', [{ first: 2, every: 3, inject: { status: 500 } }], 'rules[0].every: Forbidden: may not be combined with first'],
    ['every 0', [{ every: 0, inject: { status: 500 } }], 'rules[0].every: Invalid value: 0: must be an integer of at least 1'],
    ['an empty list', [{ match: { names: [] }, inject: { status: 500 } }], 'rules[0].match.names: Required value'],
  ];
  it.each(refused)('refuses %s with one line naming the field', (_, rules, message) => {
    const r = parseFaultText(doc(rules));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.message).toContain(message);
    expect(r.message).not.toContain('\n');
  });

  it('refuses another apiVersion or kind', () => {
    const r = parseFaultText(JSON.stringify({ apiVersion: 'apiserver.config.orch.io/v1', kind: 'FaultConfiguration', rules: [] }));
    expect(r).toEqual({ ok: false, message: 'apiVersion: Unsupported value: "apiserver.config.orch.io/v1": supported values: "apiserver.config.orch.io/v1alpha1"' });
  });

  it('reads the embedded form without apiVersion and kind, with the same checks', () => {
    expect(parseFaultObject({ seed: 3, rules: [{ match: { verbs: ['watch'] }, inject: { watch: 'drop' } }] })).toEqual({
      ok: true,
      value: { seed: 3, rules: [{ match: { verbs: ['watch'] }, inject: { watch: 'drop' } }] },
    });
    const bad = parseFaultObject({ rules: [{ inject: { status: 409 }, match: { verb: ['update'] } }] });
    expect(bad).toEqual({ ok: false, message: 'rules[0].match.verb: Forbidden: unknown field in apiserver.config.orch.io/v1alpha1 FaultConfiguration' });
  });
});
