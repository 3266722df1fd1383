/** The field manager (src/registry/field-manager.ts): who set which field, recorded on every write. */
import { describe, expect, it } from 'vitest';
import { PatchError } from '../../src/patch/errors.js';
import { managerFromUserAgent, trackApply, trackUpdate } from '../../src/registry/field-manager.js';
import { kinds } from '../../src/resources/kinds.js';
import type { KubeObject } from '../../src/api/types.js';

const event = kinds.find((k) => k.kind === 'Event' && k.group === 'events.orch.io')!;
const target = { kind: event, version: 'v1', at: new Date('2030-01-02T03:04:05Z') };
const ev = (note: string): KubeObject => ({ apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'e1', namespace: 'default' }, note }) as KubeObject;
const managers = (o: KubeObject) => (o.metadata.managedFields as { manager: string; operation: string }[] | undefined)?.map((m) => `${m.manager}/${m.operation}`);

describe('managerFromUserAgent', () => {
  it("is the User-Agent up to its first '/', as Kubernetes defaults it", () => {
    expect(managerFromUserAgent('kubectl/v1.33.1 (linux/amd64)')).toBe('kubectl');
    expect(managerFromUserAgent(undefined)).toBe('');
  });
});

describe('trackUpdate', () => {
  it('records an Update by the manager, with the fields it set (a create of an Event without labels too)', () => {
    const o = ev('hello');
    trackUpdate(target, undefined, o, 'ctl');
    expect(managers(o)).toEqual(['ctl/Update']);
    expect(JSON.stringify(o.metadata.managedFields)).toContain('f:note');
  });

  it('a second manager changing a field takes it over; the first keeps what it still owns', () => {
    const first = ev('hello');
    trackUpdate(target, undefined, first, 'one');
    const next = { ...ev('changed'), metadata: { ...first.metadata } } as KubeObject;
    trackUpdate(target, first, next, 'two');
    expect(managers(next)).toContain('two/Update');
    expect(JSON.stringify(next.metadata.managedFields)).toMatch(/"manager":"two".*f:note/);
  });
});

describe('trackApply', () => {
  it('an apply owns what its configuration sets, and conflicts with another owner unless forced', () => {
    const live = ev('hello');
    trackUpdate(target, undefined, live, 'editor');
    const config = ev('applied');
    expect(() => trackApply(target, live, config, 'applier', false)).toThrow(PatchError);
    const applied = trackApply(target, live, ev('applied'), 'applier', true);
    expect(applied.note).toBe('applied');
    expect(managers(applied)).toContain('applier/Apply');
  });
});
