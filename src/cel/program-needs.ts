/**
 * What evaluating an expression may need, read off its parsed AST once at compile time, so each
 * evaluation can skip the machinery it cannot use:
 *
 *   steps       it may run comprehension steps (all, exists, exists_one, map, filter, cel.bind)
 *               or regular expressions: only then can the meter (budget.ts) count anything or
 *               look at the clock.
 *   authorizer  it may read `authorizer`: only then can its request's checks need rounds of
 *               network answers (src/admission/cel-authorizer.ts).
 *
 * Both are upper bounds: a name that merely looks like one (an iteration variable called
 * `authorizer`, a function called `map`) counts. A `variables.<name>` reference needs what that
 * variable's expression needs, since reading it evaluates it; a `variables` used otherwise
 * (`variables['x']`) needs what all of them do.
 */
import type { ASTNode } from '@marcbachmann/cel-js';
import { RE2_MATCHES } from './lib/regex.js';

export interface ProgramNeeds {
  readonly steps: boolean;
  readonly authorizer: boolean;
}

/** The library's macros that bind an iteration variable (each binding is a step). */
const STEPPING_MACROS = new Set(['all', 'exists', 'exists_one', 'map', 'filter', 'bind']);
/** The library functions that charge the meter. */
const METERED = new Set(['matches', RE2_MATCHES, 'find', 'findAll']);

export function needsOf(ast: ASTNode, variables: ReadonlyMap<string, ProgramNeeds>): ProgramNeeds {
  let steps = false;
  let authorizer = false;
  const add = (n: ProgramNeeds | undefined) => {
    steps ||= n?.steps ?? false;
    authorizer ||= n?.authorizer ?? false;
  };
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (!isNode(value)) return;
    switch (value.op) {
      case 'value':
        return;
      case 'id':
        if (value.args === 'authorizer') authorizer = true;
        else if (value.args === 'variables') for (const v of variables.values()) add(v);
        return;
      case '.':
      case '.?': {
        const [target, field] = value.args as [ASTNode, string];
        if (isNode(target) && target.op === 'id' && target.args === 'variables') return add(variables.get(field));
        return visit(target);
      }
      case 'call':
      case 'rcall':
        if (STEPPING_MACROS.has((value.args as unknown[])[0] as string) || METERED.has((value.args as unknown[])[0] as string)) steps = true;
        return visit((value.args as unknown[]).slice(1));
      default:
        return visit(value.args);
    }
  };
  visit(ast);
  return { steps, authorizer };
}

const isNode = (v: unknown): v is ASTNode => typeof v === 'object' && v !== null && 'op' in v && 'args' in v;
