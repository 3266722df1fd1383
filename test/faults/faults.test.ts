/** Decisions from (seed, rule, ordinal) alone, rule order, and what is recorded. */
import { describe, expect, it } from 'vitest';
import type { FaultConfiguration } from '../../src/config/faults.js';
import { Faults } from '../../src/faults/faults.js';
import type { FaultRequest } from '../../src/faults/rules.js';
import { sleep } from '../helpers/poll.js';

const request = (o: Partial<FaultRequest> = {}): FaultRequest => ({
  verb: 'update',
  group: 'demo.example.com',
  resource: 'widgets',
  subresource: '',
  namespace: 'default',
  name: 'w',
  user: 'alice',
  userAgent: 'kubectl/v1.33.0 (linux/amd64)',
  fieldManager: 'kubectl-edit',
  ...o,
});

/** Which of n identical requests the rules hit, by ordinal. */
function hitsOf(config: FaultConfiguration, n: number, req = request()): number[] {
  const f = new Faults({ config, head: () => 0 });
  const out: number[] = [];
  for (let i = 0; i < n; i++) if (f.decide(req)) out.push(i);
  return out;
}

const conflicts = (seed: number, extra: object = {}): FaultConfiguration => ({ seed, rules: [{ match: { verbs: ['update'] }, probability: 0.3, inject: { status: 409 }, ...extra }] });

describe('fault decisions', () => {
  it('are the same for the same seed, and differ for another', () => {
    const a = hitsOf(conflicts(7), 200);
    expect(hitsOf(conflicts(7), 200)).toEqual(a);
    expect(hitsOf(conflicts(8), 200)).not.toEqual(a);
    // About 30 of every 100, as asked.
    expect(a.length).toBeGreaterThan(40);
    expect(a.length).toBeLessThan(80);
  });

  it('never read the clock: the same with time passing', async () => {
    const a = new Faults({ config: conflicts(7), head: () => 0 });
    const first: boolean[] = [];
    for (let i = 0; i < 20; i++) first.push(!!a.decide(request()));
    const b = new Faults({ config: conflicts(7), head: () => 0, now: () => 0 });
    const second: boolean[] = [];
    for (let i = 0; i < 20; i++) {
      await sleep(1);
      second.push(!!b.decide(request()));
    }
    expect(second).toEqual(first);
  });

  it('count only the requests a rule matched', () => {
    const f = new Faults({ config: { seed: 1, rules: [{ match: { verbs: ['update'] }, first: 2, inject: { status: 409 } }] }, head: () => 0 });
    expect(f.decide(request({ verb: 'get' }))).toBeUndefined();
    expect(f.decide(request({ verb: 'create' }))).toBeUndefined();
    expect(f.decide(request())?.ordinal).toBe(0);
    expect(f.decide(request())?.ordinal).toBe(1);
    expect(f.decide(request())).toBeUndefined();
  });

  const when: [string, object, number[]][] = [
    ['first: 3', { first: 3 }, [0, 1, 2]],
    ['every: 4', { every: 4 }, [3, 7, 11]],
    ['after: {requests: 9}', { after: { requests: 9 } }, [9, 10, 11]],
    ['always (no condition)', {}, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]],
  ];
  it.each(when)('hit by %s', (_, extra, hit) => {
    expect(hitsOf({ seed: 1, rules: [{ match: {}, inject: { status: 500 }, ...extra }] }, 12)).toEqual(hit);
  });

  it('try rules in order; the first that hits acts', () => {
    const f = new Faults({
      config: {
        seed: 1,
        rules: [
          { name: 'second-only', match: {}, every: 2, inject: { status: 500 } },
          { name: 'rest', match: {}, inject: { status: 503 } },
        ],
      },
      head: () => 0,
    });
    expect([0, 1, 2, 3].map(() => f.decide(request())?.rule.name)).toEqual(['rest', 'second-only', 'rest', 'second-only']);
  });

  const matching: [string, object, Partial<FaultRequest>, boolean][] = [
    ['a plural in any group', { resources: ['widgets'] }, {}, true],
    ['plural.group', { resources: ['widgets.demo.example.com'] }, {}, true],
    ['another group', { resources: ['widgets.other.example.com'] }, {}, false],
    ['a namespace', { namespaces: ['kube-system'] }, {}, false],
    ['a name', { names: ['w'] }, {}, true],
    ['a user', { users: ['bob'] }, {}, false],
    ['a user agent prefix', { userAgents: ['kubectl/'] }, {}, true],
    ['a field manager', { fieldManagers: ['kubectl-edit'] }, {}, true],
    ['a subresource', { subresources: ['status'] }, { subresource: 'status' }, true],
    ['the main resource only', { subresources: [''] }, { subresource: 'status' }, false],
  ];
  it.each(matching)('match by %s', (_, match, req, hit) => {
    expect(hitsOf({ seed: 1, rules: [{ match, inject: { status: 500 } }] }, 1, request(req))).toEqual(hit ? [0] : []);
  });

  it('act only on the verbs their fault can act on (a watch fault with no verbs given)', () => {
    const config: FaultConfiguration = { seed: 1, rules: [{ match: {}, inject: { watch: 'drop' } }] };
    expect(hitsOf(config, 1, request({ verb: 'list' }))).toEqual([]);
    expect(hitsOf(config, 1, request({ verb: 'watch' }))).toEqual([0]);
  });

  it('draw latency within its range, from the seed', () => {
    const config: FaultConfiguration = { seed: 5, rules: [{ match: {}, inject: { latencyMs: [100, 300] } }] };
    const draws = (c: FaultConfiguration) => {
      const f = new Faults({ config: c, head: () => 0 });
      return Array.from({ length: 50 }, () => f.decide(request())!.latencyMs!);
    };
    const a = draws(config);
    expect(a.every((ms) => ms >= 100 && ms <= 300)).toBe(true);
    expect(new Set(a).size).toBeGreaterThan(10);
    expect(draws(config)).toEqual(a);
  });

  it('start a new sequence on set(), with the same seed', () => {
    const f = new Faults({ config: conflicts(7), head: () => 0 });
    const run = () => Array.from({ length: 60 }, () => !!f.decide(request()));
    const first = run();
    f.set(conflicts(7));
    const second = run();
    expect(second).not.toEqual(first);
    f.clear();
    expect(f.active).toBeNull();
    expect(f.decide(request())).toBeUndefined();
  });

  it('record each fault with the head version, and count it for /metrics', () => {
    let head = 41;
    const f = new Faults({ config: conflicts(7, { name: 'conflicts', probability: 1 }), head: () => head, now: () => Date.UTC(2026, 0, 2) });
    f.record(f.decide(request())!, 'status:409');
    head = 45;
    f.record(f.decide(request())!, 'status:409');
    expect(f.injected()).toEqual([
      {
        time: '2026-01-02T00:00:00.000Z',
        resourceVersion: '41',
        rule: 'conflicts',
        ruleIndex: 0,
        ordinal: 0,
        fault: 'status:409',
        request: { verb: 'update', resource: 'widgets.demo.example.com', namespace: 'default', name: 'w', user: 'alice', userAgent: 'kubectl/v1.33.0 (linux/amd64)' },
      },
      expect.objectContaining({ resourceVersion: '45', ordinal: 1 }),
    ]);
    expect(f.samples()).toEqual([expect.objectContaining({ name: 'orchd_injected_faults_total', labels: { rule: 'conflicts', fault: 'status:409' }, value: 2 })]);
  });
});
