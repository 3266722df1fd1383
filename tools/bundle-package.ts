/**
 * The package entry and the `orchd` command as ES module bundles (sharing chunks, plus the chunks
 * their lazy imports load), written by `npm run build` after tsc: `import('orchd')` in a test
 * runner's fresh worker, and every `orchd` command, otherwise pay Node's module loader for hundreds
 * of files (rxjs, yaml, prom-client, OpenTelemetry's API and orchd's own), most of their start-up
 * (bench/RESULTS.md, the embed and timetravel rows).
 *
 *   node dist/tools/bundle-package.js        dist/src/{index,cli}.js → dist/package/
 *
 * Left outside the bundle, imported from node_modules as they are: the native LevelDB binary (found
 * from classic-level's own folder: BINDING below), and what only a configured backend or exporter
 * loads (etcd and gRPC, the tracing SDK and its exporter, client-node), which stay lazy. LevelDB's
 * JavaScript (level, classic-level, abstract-level: 35 files) is inside: loaded file by file, it was
 * a fifth of a time-travel command's start.
 */
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const EXTERNAL = [
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

/**
 * classic-level's `require('./binding')` loads its native binary from the folder it sits in
 * (node-gyp-build(__dirname)), which a bundle is not. In its place, the binary is loaded from
 * classic-level's folder, found as `level` (orchd's dependency) finds it.
 */
const BINDING: Plugin = {
  name: 'classic-level-binding',
  setup(b) {
    b.onResolve({ filter: /^\.\/binding(\.js)?$/ }, (args) =>
      /[\\/]classic-level[\\/][^\\/]+\.js$/.test(args.importer) ? { path: 'classic-level-binding', namespace: 'classic-level-binding' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'classic-level-binding' }, () => ({
      loader: 'js',
      contents: [
        "const { createRequire } = require('node:module');",
        "const { dirname } = require('node:path');",
        "const manifest = createRequire(require.resolve('level')).resolve('classic-level/package.json');",
        "module.exports = createRequire(manifest)('node-gyp-build')(dirname(manifest));",
      ].join('\n'),
    }));
  },
};

/**
 * msgpackr's optional native string extractor finds its binary beside its own file too, so inside a
 * bundle it never loaded (msgpackr caught the failure and decodes in JavaScript, as it does where
 * the extractor is not installed): only its loader and detect-libc ran, for nothing, in every
 * command that reads the log. It is left out: msgpackr is told there is none.
 */
const NO_MSGPACKR_EXTRACT: Plugin = {
  name: 'no-msgpackr-extract',
  setup(b) {
    b.onResolve({ filter: /^msgpackr-extract$/ }, () => ({ path: 'msgpackr-extract', namespace: 'no-msgpackr-extract' }));
    b.onLoad({ filter: /.*/, namespace: 'no-msgpackr-extract' }, () => ({ loader: 'js', contents: 'module.exports = null;' }));
  },
};

/**
 * rxjs as ES modules (its es2015 build) rather than the CommonJS build its `node` condition names:
 * CommonJS cannot be tree-shaken, so every command that opens a log (the log's committed$ is a
 * Subject) loaded and ran all of rxjs, a 360 KB chunk; the ES build is cut to what orchd uses.
 */
const RXJS_ESM: Plugin = {
  name: 'rxjs-esm',
  setup(b) {
    const root = dirname(createRequire(import.meta.url).resolve('rxjs/package.json'));
    b.onResolve({ filter: /^rxjs$/ }, () => ({ path: join(root, 'dist/esm/index.js') }));
  },
};

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
    plugins: [BINDING, NO_MSGPACKR_EXTRACT, RXJS_ESM],
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
