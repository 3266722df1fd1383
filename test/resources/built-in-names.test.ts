/**
 * The built-in kinds' names without their schemas (src/resources/built-in-names.ts), which a command
 * resolves RESOURCE by without loading the kinds: the same names, in the same order, as the kinds'.
 */
import { describe, expect, it } from 'vitest';
import { builtInNames } from '../../src/resources/built-in-names.js';
import { kinds } from '../../src/resources/kinds.js';
import { namesKind } from '../../src/api/kind-names.js';

describe('built-in kind names', () => {
  it('are the kinds’ own names, in the order they are served', () => {
    const names = kinds.map((k) => ({
      group: k.group,
      versions: k.versions,
      kind: k.kind,
      plural: k.plural,
      singular: k.singular,
      ...(k.shortNames ? { shortNames: k.shortNames } : {}),
      namespaced: k.namespaced,
    }));
    expect(builtInNames).toEqual(names);
  });

  it('name the kind a text names first, as the kinds do', () => {
    for (const text of ['events', 'ev', 'events.', 'Event', 'vap', 'crds', 'cm', 'leases.coordination.orch.io', 'roles.v1.rbac.authorization.orch.io', 'webapps']) {
      const full = kinds.find((k) => namesKind(k, text));
      const light = builtInNames.find((k) => namesKind(k, text));
      expect(light && `${light.group}/${light.plural}`).toEqual(full && `${full.group}/${full.plural}`);
    }
  });
});
