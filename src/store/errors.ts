/** Errors of the store speak storage ("key exists at rv 42"); the API edge maps codes to statuses. */
export type StoreErrorCode = 'KEY_EXISTS' | 'NOT_FOUND' | 'CONFLICT' | 'COMPACTED' | 'FUTURE_SEQ' | 'TOO_MANY_RETRIES';

export class StoreError extends Error {
  constructor(
    readonly code: StoreErrorCode,
    readonly key: string,
    message: string,
    readonly seq?: number,
    /** COMPACTED: the oldest version still readable, when the store knows it (a list at a version). */
    readonly oldest?: number,
  ) {
    super(message);
    this.name = 'StoreError';
  }
}
