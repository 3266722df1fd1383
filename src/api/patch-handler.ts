import type { Request } from './context.js';
import * as E from './status.js';

/** PATCH of an object or its /status. */
export async function handlePatch(r: Request): Promise<void> {
  throw E.unsupportedMediaType(r.req.headers['content-type'] ?? '');
}
