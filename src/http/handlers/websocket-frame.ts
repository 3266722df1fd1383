/** The header of an unmasked, final WebSocket text frame of n payload bytes (RFC 6455 §5.2), as a server sends it. */
export function frameHeader(n: number): Buffer {
  if (n < 126) return Buffer.from([0x81, n]);
  if (n < 65536) return Buffer.from([0x81, 126, n >> 8, n & 0xff]);
  const h = Buffer.alloc(10);
  h[0] = 0x81;
  h[1] = 127;
  h.writeBigUInt64BE(BigInt(n), 2);
  return h;
}
