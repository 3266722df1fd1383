/**
 * The rooms of ../shared/design.md: every import between two folders of src/ points down the rooms
 * table. A new import that points up fails here with the file that made it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');

/**
 * What each room may import directly (the "may import" column, with what those rooms may import in
 * turn). Where this differs from design.md the reason is beside it.
 */
const DIRECT: Record<string, string[]> = {
  log: [],
  selectors: [],
  resources: ['selectors'],
  store: ['log', 'selectors', 'resources'],
  patch: ['resources'],
  cel: [],
  // Configuration files are validated with the kinds' field errors and name formats.
  config: ['resources'],
  // Outbound connections are dialed as the egress selector configuration says.
  egress: ['config'],
  // Webhooks are dialed through egress with the admission configuration's credentials; apply
  // mutations reuse the patch room's merge.
  admission: ['cel', 'resources', 'selectors', 'store', 'patch', 'egress', 'config'],
  auth: ['cel', 'selectors', 'store', 'egress', 'config'],
  registry: ['log', 'selectors', 'resources', 'store', 'patch', 'cel', 'admission', 'auth', 'config', 'egress'],
  controllers: ['registry'],
  discovery: ['resources'],
  openapi: ['resources', 'discovery'],
  http: ['registry', 'auth', 'discovery', 'openapi'],
  // The logger, metrics and spans are used by every room; they import only the tracing configuration.
  observability: ['config'],
  serve: ['*'],
  cli: ['*'],
};
/** Imported by every room. */
const CROSS_CUTTING = new Set(['observability']);

/** Imports that point up today and are being removed (issue 14); the list only shrinks. */
const PENDING = new Set<string>([
  'src/http/server.ts -> src/controllers/event-expiry.js',
  'src/http/server.ts -> src/controllers/garbage-collector.js',
  'src/http/server.ts -> src/controllers/namespace-cleanup.js',
  'src/http/server.ts -> src/controllers/policy-status.js',
  'src/http/server.ts -> src/controllers/rbac-bootstrap.js',
  'src/http/server.ts -> src/controllers/cluster-role-aggregation.js',
]);

function closure(room: string, seen = new Set<string>()): Set<string> {
  for (const r of DIRECT[room] ?? []) {
    if (seen.has(r)) continue;
    seen.add(r);
    closure(r, seen);
  }
  return seen;
}

function roomOf(file: string): string {
  const parts = relative(SRC, file).split('/');
  return parts.length > 1 ? parts[0] : parts[0].replace(/\.ts$/, '');
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

function upwardImports(): string[] {
  const found: string[] = [];
  for (const file of sources(SRC)) {
    const from = roomOf(file);
    const allowed = closure(from);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const to = roomOf(resolve(dirname(file), m[1]));
      if (to === from || CROSS_CUTTING.has(to) || allowed.has('*') || allowed.has(to)) continue;
      found.push(`${relative(ROOT, file)} -> ${relative(ROOT, resolve(dirname(file), m[1]))}`);
    }
  }
  return found;
}

describe('rooms', () => {
  it('every room of src/ is in the table', () => {
    const rooms = new Set(sources(SRC).map(roomOf));
    for (const r of rooms) expect(Object.keys(DIRECT), `room ${r}`).toContain(r);
  });

  it('no import points up the rooms table', () => {
    const up = upwardImports();
    expect(up.filter((e) => !PENDING.has(e))).toEqual([]);
    // A pending exception that no longer exists is removed from the list.
    expect([...PENDING].filter((e) => !up.includes(e))).toEqual([]);
  });
});
