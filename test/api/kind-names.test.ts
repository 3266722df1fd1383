/**
 * The one kind-name resolver (src/api/kind-names.ts), which startOrchd's history()/state() and the
 * time-travel commands share: kubectl's names, initials for built-in kinds only, a group or a
 * version and group to tell kinds apart, the first served where two kinds share a plural and Kind.
 */
import { describe, expect, it } from 'vitest';
import { KindNameError, kindNamed, namesKind, resolveKind } from '../../src/api/kind-names.js';
import type { KindStrategy } from '../../src/api/strategy.js';
import { kinds } from '../../src/resources/kinds.js';

const find = (group: string, plural: string): KindStrategy => kinds.find((k) => k.group === group && k.plural === plural)!;
const vap = find('admissionregistration.orch.io', 'validatingadmissionpolicies');
const configMaps = find('', 'configmaps');
const orchEvents = find('events.orch.io', 'events');
const coreEvents = find('', 'events');
const widgets = {
  ...configMaps,
  group: 'demo.example.com',
  versions: ['v1'],
  kind: 'WideGadget',
  listKind: 'WideGadgetList',
  plural: 'widegadgets',
  singular: 'widegadget',
  shortNames: ['wg'],
  custom: true,
} as KindStrategy;

describe('kind names', () => {
  it('takes the plural, singular, Kind in any case and short names, alone, with the group, or with version and group', () => {
    for (const text of ['configmaps', 'configmap', 'ConfigMap', 'CONFIGMAP', 'cm', 'configmaps.', 'cm.v1.']) expect([text, namesKind(configMaps, text)]).toEqual([text, true]);
    for (const text of ['validatingadmissionpolicies.admissionregistration.orch.io', 'vap.v1.admissionregistration.orch.io']) expect([text, namesKind(vap, text)]).toEqual([text, true]);
    expect(namesKind(vap, 'vap.other.group')).toBe(false);
    expect(namesKind(widgets, 'wg.demo.example.com')).toBe(true);
  });

  it('initials name a built-in kind, never a custom one (kubectl takes only the short names a CRD says)', () => {
    expect(namesKind(vap, 'vap')).toBe(true);
    expect(namesKind(widgets, 'wg')).toBe(true);
    expect(namesKind({ ...widgets, shortNames: [] } as KindStrategy, 'wg')).toBe(false);
  });

  it('a name of two kinds alike means the first served; `events.` (the core group) names the core one', () => {
    expect(kindNamed(kinds, 'events')).toBe(orchEvents);
    expect(kindNamed(kinds, 'Event')).toBe(orchEvents);
    expect(kindNamed(kinds, 'events.')).toBe(coreEvents);
    expect(kindNamed(kinds, 'events.events.orch.io')).toBe(orchEvents);
  });

  it('a name that fits kinds of different names is refused, naming them', () => {
    const other = { ...widgets, group: 'other.example.com', kind: 'Other', plural: 'others', singular: 'other' } as KindStrategy;
    expect(() => kindNamed([widgets, other], 'wg')).toThrow(
      new KindNameError('"wg" names several resources (widegadgets.demo.example.com, others.other.example.com): name one of them with its group'),
    );
  });

  it('resolveKind also takes an apiVersion that serves one kind, and says what is served when nothing fits', () => {
    expect(resolveKind([configMaps, vap], 'v1')).toBe(configMaps);
    expect(resolveKind([configMaps, widgets], 'demo.example.com/v1')).toBe(widgets);
    expect(() => resolveKind([configMaps, coreEvents], 'v1')).toThrow(KindNameError);
    expect(() => resolveKind([configMaps], 'gadgets')).toThrow('"gadgets": no such resource or apiVersion (served: configmaps)');
  });
});
