import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/types.js';
import { kindsOfCrds } from '../../src/timetravel/core/custom-kinds.js';
import { crd } from './custom-kinds-fixture.js';

/* Which CRDs of a history define a kind: the rules of src/timetravel/core/custom-kinds.ts, on CRD objects as the log holds them. */

const named = (group: string, plural: string, kind: string, patch: (o: any) => void = () => undefined): KubeObject => {
  const o = crd(group, plural, kind, 'Namespaced', []) as any;
  patch(o);
  return o as KubeObject;
};

describe('kindsOfCrds', () => {
  it('defines each CRD’s kind through the server’s own strategy, sorted by collection', () => {
    const ks = kindsOfCrds([named('b.example.com', 'things', 'Thing'), named('a.example.com', 'webapps', 'WebApp')]);
    expect(ks.map((k) => `${k.group}/${k.plural} ${k.kind} ${k.namespaced} ${k.versions.join(',')}`)).toEqual(['a.example.com/webapps WebApp true v1', 'b.example.com/things Thing true v1']);
    expect(typeof ks[0].validate).toBe('function');
  });

  it('a CRD whose names the server refused, or that serves no version, or that claims a built-in kind, defines none', () => {
    const refused = named('a.example.com', 'dupes', 'Dupe', (o) => (o.status = { conditions: [{ type: 'NamesAccepted', status: 'False', reason: 'PluralConflict' }] }));
    const accepted = named('a.example.com', 'oks', 'Ok', (o) => (o.status = { conditions: [{ type: 'NamesAccepted', status: 'True' }] }));
    const unserved = named('a.example.com', 'hidden', 'Hidden', (o) => (o.spec.versions[0].served = false));
    const builtIn = named('events.orch.io', 'events', 'Event');
    expect(kindsOfCrds([refused, accepted, unserved, builtIn]).map((k) => k.plural)).toEqual(['oks']);
  });
});
