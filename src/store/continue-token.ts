import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Continue tokens: opaque to clients, tamper-checked (HMAC), and bound to the query they came from,
 * so a token is only valid with the same resource, namespace and selectors. They carry the snapshot
 * version of the first page (-1: the latest, as Kubernetes' tokens handed out with a 410 say), the
 * last key returned, and for an unfiltered list how many objects remained (remainingItemCount).
 */
export interface ContinuePoint {
  /** The snapshot every page of this list is read at; -1 = whatever is newest when it is used. */
  seq: number;
  /** The in-collection key the previous page ended with. */
  after: string;
  /** Objects left after that key at seq (unfiltered lists only). */
  remaining?: number;
}

export class ContinueTokens {
  constructor(private readonly secret: Buffer) {}

  encode(p: ContinuePoint, query: string): string {
    const body = Buffer.from(JSON.stringify({ v: 1, rv: p.seq, start: p.after, ...(p.remaining !== undefined ? { rem: p.remaining } : {}) })).toString('base64url');
    return `${body}.${this.mac(body, query)}`;
  }

  /** undefined when the token is malformed, forged, or from another query. */
  decode(token: string, query: string): ContinuePoint | undefined {
    const dot = token.lastIndexOf('.');
    if (dot <= 0) return undefined;
    const body = token.slice(0, dot);
    const mac = Buffer.from(token.slice(dot + 1));
    const want = Buffer.from(this.mac(body, query));
    if (mac.length !== want.length || !timingSafeEqual(mac, want)) return undefined;
    try {
      const p = JSON.parse(Buffer.from(body, 'base64url').toString()) as { v?: number; rv?: unknown; start?: unknown; rem?: unknown };
      if (p.v !== 1 || typeof p.rv !== 'number' || typeof p.start !== 'string') return undefined;
      return { seq: p.rv, after: p.start, ...(typeof p.rem === 'number' ? { remaining: p.rem } : {}) };
    } catch {
      return undefined;
    }
  }

  private mac(body: string, query: string): string {
    return createHmac('sha256', this.secret).update(body).update('\0').update(query).digest('base64url').slice(0, 22);
  }
}
