/** What the admission suites share: creating objects through the real server, fresh namespaces. */
import { expect } from 'vitest';
import { call } from '../helpers/server.js';

/** POSTs body to path and expects 201; the object as created. */
export async function created(base: string, path: string, body: unknown): Promise<any> {
  const r = await call(base, 'POST', path, body);
  expect(r.status, r.text).toBe(201);
  return r.body;
}

/** Makes fresh namespaces (so tests do not see each other's objects), named `<prefix>-<n>`, with labels. */
export function namespaceMaker(base: () => string, prefix: string): (labels?: Record<string, string>) => Promise<string> {
  let n = 0;
  return async (labels = {}) => {
    const name = `${prefix}-${++n}`;
    await created(base(), '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
    return name;
  };
}
