/**
 * The package entry and the `orchd` command as ES module bundles (sharing chunks, plus the chunks
 * their lazy imports load), written by `npm run build` after tsc: `import('orchd')` in a test
 * runner's fresh worker, and every `orchd` command, otherwise pay Node's module loader for hundreds
 * of files (rxjs, yaml, prom-client, OpenTelemetry's API and orchd's own), most of their start-up
 * (bench/RESULTS.md, the embed and timetravel rows).
 *
 *   node dist/tools/bundle-package.js        dist/src/{index,cli}.js → dist/package/
 *
 * Left outside the bundle, imported from node_modules as they are: the native LevelDB binding (its
 * loader finds the binary next to its own file), and what only a configured backend or exporter
 * loads (etcd and gRPC, the tracing SDK and its exporter, client-node), which stay lazy.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const EXTERNAL = [
  'level',
  'classic-level',
  'etcd3',
  'cockatiel',
  '@grpc/*',
  'protobufjs',
  '@kubernetes/client-node',
  // The tracing SDK, loaded only when tracing is configured; the API (every span call) is inside.
  '@opentelemetry/context-async-hooks',
  '@opentelemetry/core',
  '@opentelemetry/exporter-trace-otlp-grpc',
  '@opentelemetry/resources',
  '@opentelemetry/sdk-trace',
];

/** Bundles entries (built modules: index.js, cli.js) into outdir, emptied first, each under its own name. */
export async function bundlePackage(entries: string[], outdir: string): Promise<void> {
  await rm(outdir, { recursive: true, force: true });
  await build({
    entryPoints: entries,
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL,
    logLevel: 'warning',
    // The CommonJS dependencies inside (prom-client, parts of OpenTelemetry) call require for Node's
    // own modules: an ES module has none unless one is made.
    banner: { js: "import { createRequire as orchdRequire } from 'node:module'; const require = orchdRequire(import.meta.url);" },
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dist = fileURLToPath(new URL('../', import.meta.url));
  await bundlePackage([join(dist, 'src/index.js'), join(dist, 'src/cli.js')], join(dist, 'package'));
}
