/**
 * Importing orchd loads no client of a backend or a plugin it is not asked to use (issue 30: a
 * controller's test suite pays the import in every worker): no etcd client, gRPC, protobufjs or
 * OpenTelemetry SDK until a server is configured for them or copyOldLayout is called. The package
 * entry is the bundle `npm run build` makes (tools/bundle-package.ts), made the same way from the
 * current sources: it is imported, and a server started from it serves a list.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { builtPackage } from '../server/child.js';

it('import of the package entry leaves etcd3, gRPC, protobufjs and the OpenTelemetry SDK unloaded, copyOldLayout still exported; a server started from it serves', async () => {
  const entry = pathToFileURL(join(await builtPackage(), 'index.js')).href;
  const script = `
    import { createRequire } from 'node:module';
    const orchd = await import(${JSON.stringify(entry)});
    const loaded = new Set(Object.keys(createRequire(import.meta.url)('module')._cache).map((f) => f.match(/node_modules\\/(@[^/]+\\/[^/]+|[^/]+)/)?.[1]).filter(Boolean));
    const api = await orchd.startOrchd({ storage: 'memory' });
    const list = await fetch(api.url + '/api/v1/namespaces');
    const names = (await list.json()).items.map((n) => n.metadata.name);
    await api.stop();
    console.log(JSON.stringify({ loaded: [...loaded].sort(), copyOldLayout: typeof orchd.copyOldLayout, startOrchd: typeof orchd.startOrchd, status: list.status, names }));
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  expect(r.stderr).toBe('');
  const { loaded, copyOldLayout, startOrchd, status, names } = JSON.parse(r.stdout) as { loaded: string[]; copyOldLayout: string; startOrchd: string; status: number; names: string[] };
  expect([copyOldLayout, startOrchd]).toEqual(['function', 'function']);
  expect(status).toBe(200);
  expect(names).toEqual(expect.arrayContaining(['default', 'kube-system']));
  expect(loaded.filter((p) => /^(etcd3|@grpc\/|protobufjs|@opentelemetry\/(sdk|exporter))/.test(p))).toEqual([]);
}, 180_000);
