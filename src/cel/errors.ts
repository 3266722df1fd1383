/**
 * The errors of the CEL room. Compile errors are field errors, shaped like the resources room's
 * FieldError (type, field, value, detail) so callers can report them in a 422 Status unchanged, and
 * worded as Kubernetes words them:
 *   spec.validations[0].expression: Invalid value: "object.spec.replicsa > 1": compilation failed:
 *   ERROR: <input>:1:13: undefined field 'replicsa'
 * Evaluation errors are classes, so a caller applying failurePolicy can tell a bad expression from
 * one that ran out of budget or time.
 */

export interface CelFieldError {
  type: 'FieldValueInvalid' | 'FieldValueRequired' | 'FieldValueForbidden';
  field: string;
  value?: unknown;
  detail?: string;
}

/** One problem found while compiling, at an offset range of the original expression text. */
export interface CelIssue {
  message: string;
  start?: number;
}

/** `ERROR: <input>:L:C: message` followed by the line and a caret, as cel-go prints issues. */
export function formatIssue(expression: string, issue: CelIssue): string {
  if (issue.start === undefined) return `ERROR: <input>:-1:0: ${issue.message}`;
  const pos = Math.max(0, Math.min(issue.start, expression.length));
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < pos; i++) {
    if (expression[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  }
  let lineEnd = expression.indexOf('\n', lineStart);
  if (lineEnd < 0) lineEnd = expression.length;
  const col = [...expression.slice(lineStart, pos)].length;
  const text = expression.slice(lineStart, lineEnd);
  return `ERROR: <input>:${line}:${col + 1}: ${issue.message}\n | ${text}\n | ${'.'.repeat(col)}^`;
}

export function compileFieldError(field: string, expression: string, issues: CelIssue[]): CelFieldError {
  return {
    type: 'FieldValueInvalid',
    field,
    value: expression,
    detail: `compilation failed: ${issues.map((i) => formatIssue(expression, i)).join('\n')}`,
  };
}

/** Kubernetes' rendering of a field error, for messages and tests. */
export function fieldErrorText(e: CelFieldError): string {
  const kind = e.type === 'FieldValueInvalid' ? 'Invalid value' : e.type === 'FieldValueRequired' ? 'Required value' : 'Forbidden';
  const value = e.type === 'FieldValueInvalid' ? ` ${JSON.stringify(e.value)}:` : ':';
  return `${e.field}: ${kind}:${value} ${e.detail ?? ''}`.trimEnd();
}

/** An expression failed while evaluating (no such key, overflow, a library function's error…). */
export class CelEvaluationError extends Error {
  override readonly name: string = 'CelEvaluationError';
  constructor(
    message: string,
    readonly code: string = 'evaluation_error',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The evaluation used more than its runtime cost limit (comprehension steps). */
export class CelCostLimitError extends CelEvaluationError {
  override readonly name = 'CelCostLimitError';
  constructor(readonly limit: number) {
    super('operation cancelled: actual cost limit exceeded', 'cost_limit_exceeded');
  }
}

/** The evaluation ran longer than its wall-clock bound. */
export class CelTimeoutError extends CelEvaluationError {
  override readonly name = 'CelTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`operation interrupted: evaluation exceeded its time bound of ${timeoutMs}ms`, 'timeout');
  }
}
