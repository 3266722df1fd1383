import { describe, expect, it } from 'vitest';
import { referencedVariables } from '../../src/cel/variable-references.js';

describe('variables referenced by a CEL expression', () => {
  it.each([
    ['dotted', 'variables.a + variables.b', ['a', 'b']],
    ['indexed', 'variables[\'a\'] && variables["b"]', ['a', 'b']],
    ['spaced', 'variables . a', ['a']],
    ['each once', 'variables.a + variables.a', ['a']],
    ['not inside strings', "'variables.a' + \"variables.b\" + r'variables.c' + '''variables.d'''", []],
    ['not a field named variables', 'object.variables.a', []],
    ['not in comments', 'true // variables.a\n&& variables.b', ['b']],
    ['escaped quotes do not end a string', "'it\\'s variables.a' + variables.b", ['b']],
    ['nothing', 'object.spec.replicas > 1', []],
  ])('%s', (_n, expr, want) => expect(referencedVariables(expr)).toEqual(want));
});
