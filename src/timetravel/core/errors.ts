/**
 * How a time-travel command refuses: one line, never a stack trace. The `orchd` command
 * (cli/flags.ts runCommand) prints any error by its `refusal`: `usage` is a mistake in the command
 * line (exit 2, with a pointer to --help), `failed` one the user can fix that is not in its shape (a
 * version not in the log, a missing file: exit 1). The refusal is a field, not a class to import, so
 * this room does not reach up into the command line's.
 */
export class TimeTravelError extends Error {
  readonly refusal = 'failed';
}

export class TimeTravelUsageError extends Error {
  readonly refusal = 'usage';
}

/** Where a command says what it did on the side (the version a time resolved to): its stderr. */
export interface Notes {
  err: NodeJS.WritableStream;
}
