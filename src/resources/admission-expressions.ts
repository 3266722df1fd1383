/**
 * The CEL-bearing lists the admission kinds share: matchConditions and variables. Only the shape
 * is checked here (names, presence, limits, order of variables); compiling the expressions is the
 * CEL room's job.
 */
import { FieldPath, duplicate, invalid, required, tooMany, type FieldError } from '../api/field-errors.js';
import { stringAt } from '../api/json-access.js';
import { isCELIdentifier, isQualifiedName } from '../api/name-formats.js';
import { referencedVariables, variablesOffset } from '../cel/variable-references.js';

export const MAX_MATCH_CONDITIONS = 64;

/**
 * matchConditions (policies and webhooks): at most 64; each has a non-blank expression and a name
 * that is a qualified name, unique in the list. An expression may not read `variables` (the spec:
 * variables are available to every expression "except matchConditions"): Kubernetes compiles
 * matchConditions without it, so it is the same compile error here.
 */
export function validateMatchConditions(conditions: unknown[], p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (conditions.length > MAX_MATCH_CONDITIONS) errs.push(tooMany(p, conditions.length, MAX_MATCH_CONDITIONS));
  const names = new Set<string>();
  conditions.forEach((c, i) => {
    const cp = p.index(i);
    const expression = stringAt(c, 'expression');
    if (expression.trim() === '') errs.push(required(cp.child('expression'), ''));
    const at = variablesOffset(expression);
    if (at !== undefined) errs.push(invalid(cp.child('expression'), expression, undeclaredVariables(expression, at)));
    const name = stringAt(c, 'name');
    if (!name) {
      errs.push(required(cp.child('name'), ''));
      return;
    }
    errs.push(...isQualifiedName(name).map((m) => invalid(cp.child('name'), name, m)));
    if (names.has(name)) errs.push(duplicate(cp.child('name'), name));
    names.add(name);
  });
  return errs;
}

/** cel-go's text for an undeclared `variables` at offset `at`: position, the line, and a caret under it. */
function undeclaredVariables(expression: string, at: number): string {
  const lineStart = expression.lastIndexOf('\n', at - 1) + 1;
  const lineEnd = expression.indexOf('\n', at);
  const line = expression.slice(lineStart, lineEnd < 0 ? undefined : lineEnd);
  const row = expression.slice(0, lineStart).split('\n').length;
  const col = at - lineStart;
  return `compilation failed: ERROR: <input>:${row}:${col + 1}: undeclared reference to 'variables' (in container '')\n | ${line}\n | ${'.'.repeat(col)}^`;
}

/**
 * variables: each a CEL identifier with a non-blank expression, names unique, and an expression may
 * only use variables declared before it (so the list is ordered and acyclic). Kubernetes finds a
 * forward or self reference when it compiles the variables in order; it is detected textually here.
 */
export function validateVariables(variables: unknown[], p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const firstIndex = new Map<string, number>();
  variables.forEach((v, i) => {
    const vp = p.index(i);
    const name = stringAt(v, 'name');
    if (name.trim() === '') errs.push(required(vp.child('name'), 'name is not specified'));
    else if (!isCELIdentifier(name)) errs.push(invalid(vp.child('name'), name, 'name is not a valid CEL identifier'));
    if (name && firstIndex.has(name)) errs.push(duplicate(vp.child('name'), name));
    else if (name) firstIndex.set(name, i);
    if (stringAt(v, 'expression').trim() === '') errs.push(required(vp.child('expression'), 'expression is not specified'));
  });
  variables.forEach((v, i) => {
    const expression = stringAt(v, 'expression');
    for (const ref of referencedVariables(expression)) {
      const j = firstIndex.get(ref);
      if (j === undefined || j < i) continue;
      const detail =
        j === i
          ? `variable "${ref}" refers to itself: a variable may only reference variables declared before it`
          : `refers to variables.${ref}, which is declared later (variables[${j}]): a variable may only reference variables declared before it`;
      errs.push(invalid(p.index(i).child('expression'), expression, detail));
    }
  });
  return errs;
}
