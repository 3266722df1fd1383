/**
 * The identity provider stores values as they are (plain msgpack inside the log record, no prefix).
 * It is a marker in a provider list rather than a Transformer: first in the list it means "write
 * plainly"; anywhere in the list it means "plain values may be read" (as when encryption is first
 * turned on over existing data, with identity last).
 */
export const IDENTITY = 'identity' as const;
