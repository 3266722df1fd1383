/**
 * Protobuf request bodies (`application/vnd.kubernetes.protobuf`), decoded by protobuf-decode.ts. That
 * file and protobufjs are loaded by the first protobuf body (readBody awaits loadProtobufDecoder),
 * so a server whose clients send JSON never loads them.
 */
import type { Decoded } from './json-decode.js';

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';

export { ProtobufBodyError } from './protobuf-error.js';

let decoder: typeof import('./protobuf-decode.js') | undefined;

/** Loads the decoder; decodeProtobuf may be called once this has resolved. */
export async function loadProtobufDecoder(): Promise<void> {
  decoder ??= await import('./protobuf-decode.js');
}

/** The JSON object a protobuf body holds (no duplicate keys can exist in protobuf). */
export function decodeProtobuf(buf: Buffer): Decoded {
  if (!decoder) throw new Error('the protobuf decoder is not loaded: await loadProtobufDecoder() first');
  return decoder.decodeProtobuf(buf);
}
