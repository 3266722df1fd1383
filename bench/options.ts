/** The harness's command line (node:util parseArgs), turned into typed, validated options. */
import { parseArgs } from 'node:util';

export const SCENARIOS = ['writes', 'reads', 'watch', 'replay', 'memory', 'patch', 'lists', 'admission', 'authz', 'encryption', 'embed', 'timetravel', 'replicas', 'crd', 'paced'] as const;
export type ScenarioId = (typeof SCENARIOS)[number];

/** What `--only` may name: the timetravel scenario's measurements. */
export const TIMETRAVEL_MEASUREMENTS = [
  'state',
  'state-server',
  'history',
  'history-server',
  'log',
  'log-server',
  'diff',
  'diff-server',
  'follow',
  'export',
  'replay',
  'catch-up',
  'fork',
  'fork-folder',
  'start',
  'checkpoints',
] as const;

export const WATCH_TRANSPORTS = ['http', 'websocket'] as const;
export type WatchTransport = (typeof WATCH_TRANSPORTS)[number];

export interface BenchOptions {
  scenarios: ScenarioId[];
  clients: number[];
  /** writes: rounds per client count, each system's cells taken in turn (the table shows the median round). */
  rounds: number;
  readClients: number;
  durationMs: number;
  warmupMs: number;
  maxOps: number;
  readSizes: number[];
  watchers: number[];
  watchRate: number;
  watchTransports: WatchTransport[];
  /** Watchers per selective watch cell (empty: none). */
  watchSelective: number[];
  /** MB of history each of the ten catch-up watches replays (0: no catch-up cells). */
  watchCatchUpMb: number;
  replayEntries: number[];
  memoryObjects: number;
  streamListObjects: number[];
  listObjects: number;
  policies: number[];
  embedTests: number;
  compareEtcd: boolean;
  ceilings: boolean;
  json?: string;
  report?: string;
  cpuProf?: string;
  /** Another build's dist/src/cli.js, run beside this one where a scenario supports it (timetravel). */
  beforeCli?: string;
  /** timetravel: only these commands' measurements (empty: all). */
  only: string[];
  /** Servers to run against instead of an orchd of this checkout: kubeconfig files, each with its context (undefined: its current one). */
  kubeconfigs: { file: string; context?: string }[];
}

export const usage = `usage: npm run bench -- [scenario ...] [options]

scenarios: ${SCENARIOS.join(', ')} (default: all)

  --clients 1,16,64,256     concurrent clients for writes (and encryption)
  --rounds 3                writes: rounds per client count, orchd and etcd in turn (median shown)
  --read-clients 16         concurrent clients for reads, patches and admission
  --duration 5s             measured time per cell (after the warm-up)
  --warmup 1s               warm-up per cell, not recorded
  --max-ops 2000000         cap on measured operations per cell
  --read-sizes 10000,100000 stored objects for the read scenario
  --watchers 100,1000       watchers per watch cell
  --watch-rate 100          writes/s during the watch scenario
  --watch-transports http,websocket  how the watchers watch: chunked HTTP, WebSockets, or both
  --watch-selective 100,10000  watchers per selective watch cell (each on its own namespace, then
                            each on its own regarding.name); 0 skips them
  --watch-catch-up 60       MB of history each of ten catch-up watches replays beside live
                            watchers (issue 18); 0 skips them
  --replay-entries 10000,100000  log lengths for the replay scenario (the target is 1000000)
  --memory-objects 20000    objects created for the memory scenario
  --stream-list-objects 10000,100000  stored objects for the memory scenario's plain vs streaming list
  --list-objects 100000     stored objects for the lists scenario (the targets are at 100000)
  --policies 10,100         matching validating policies per admission row (a row without any always runs)
  --embed-tests 100         tests in each embed suite (and resets and starts measured)
  --compare etcd            run etcd (installed from Debian when missing) side by side
  --no-ceilings             skip the bare node:http and raw LevelDB ceilings
  --json FILE               write every result as JSON
  --report FILE.html        write tables and plots as one self-contained HTML page
  --cpu-prof DIR            write a V8 CPU profile of every orchd child into DIR
  --before-cli CLI          timetravel: also run every command with another build's orchd
                            (e.g. a worktree of the base commit: /tmp/base/dist/src/cli.js)
  --only state,history      timetravel: only these of its measurements (state, state-server,
                            history, history-server, log, log-server, diff, diff-server,
                            follow, export, replay, catch-up, fork, fork-folder, start,
                            checkpoints;
                            default: all)
  --kubeconfig FILE         run writes and reads against the server FILE names instead (TLS,
                            client certificates, bearer tokens as it says); repeat it to put
                            several servers side by side
  --context C               the context of the --kubeconfig before it (default: its current one)
`;

/** "20s", "500ms", "2m", or plain seconds. */
export function parseDurationMs(s: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(s.trim());
  if (!m) throw new Error(`not a duration: ${s} (use e.g. 500ms, 20s, 2m)`);
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}

function positiveInts(flag: string, s: string): number[] {
  const list = s.split(',').map((x) => Number(x.trim().replace(/_/g, '')));
  if (list.length === 0 || list.some((n) => !Number.isInteger(n) || n <= 0)) throw new Error(`--${flag}: expected positive integers separated by commas, got ${s}`);
  return list;
}

function positiveInt(flag: string, s: string): number {
  const [n] = positiveInts(flag, s);
  if (s.includes(',')) throw new Error(`--${flag}: expected one number, got ${s}`);
  return n;
}

function watchTransports(s: string): WatchTransport[] {
  const list = s.split(',').map((x) => x.trim());
  for (const t of list) if (!(WATCH_TRANSPORTS as readonly string[]).includes(t)) throw new Error(`--watch-transports: expected ${WATCH_TRANSPORTS.join(' and/or ')}, got ${t}`);
  return [...new Set(list as WatchTransport[])];
}

function only(s: string): string[] {
  const list = s.split(',').map((x) => x.trim());
  for (const m of list) if (!(TIMETRAVEL_MEASUREMENTS as readonly string[]).includes(m)) throw new Error(`--only: expected some of ${TIMETRAVEL_MEASUREMENTS.join(', ')}, got ${m}`);
  return list;
}

/** Each --kubeconfig with the --context that follows it (before the next --kubeconfig). */
function kubeconfigs(tokens: ReturnType<typeof parseArgs>['tokens'] = []): BenchOptions['kubeconfigs'] {
  const out: BenchOptions['kubeconfigs'] = [];
  for (const t of tokens) {
    if (t.kind !== 'option' || t.value === undefined) continue;
    if (t.name === 'kubeconfig') out.push({ file: t.value });
    else if (t.name === 'context') {
      const last = out[out.length - 1];
      if (!last || last.context !== undefined) throw new Error('--context must follow the --kubeconfig it belongs to');
      last.context = t.value;
    }
  }
  return out;
}

export function parseOptions(argv: string[]): BenchOptions | 'help' {
  const { values, positionals, tokens } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    tokens: true,
    options: {
      clients: { type: 'string', default: '1,16,64,256' },
      rounds: { type: 'string', default: '3' },
      'read-clients': { type: 'string', default: '16' },
      duration: { type: 'string', default: '5s' },
      warmup: { type: 'string', default: '1s' },
      'max-ops': { type: 'string', default: '2000000' },
      'read-sizes': { type: 'string', default: '10000,100000' },
      watchers: { type: 'string', default: '100,1000' },
      'watch-rate': { type: 'string', default: '100' },
      'watch-transports': { type: 'string', default: WATCH_TRANSPORTS.join(',') },
      'watch-selective': { type: 'string', default: '100,10000' },
      'watch-catch-up': { type: 'string', default: '60' },
      'replay-entries': { type: 'string', default: '10000,100000' },
      'memory-objects': { type: 'string', default: '20000' },
      'stream-list-objects': { type: 'string', default: '10000,100000' },
      'list-objects': { type: 'string', default: '100000' },
      policies: { type: 'string', default: '10,100' },
      'embed-tests': { type: 'string', default: '100' },
      compare: { type: 'string' },
      'no-ceilings': { type: 'boolean', default: false },
      json: { type: 'string' },
      report: { type: 'string' },
      'cpu-prof': { type: 'string' },
      'before-cli': { type: 'string' },
      only: { type: 'string' },
      kubeconfig: { type: 'string', multiple: true },
      context: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return 'help';
  for (const p of positionals) {
    if (!(SCENARIOS as readonly string[]).includes(p)) throw new Error(`unknown scenario ${p}; scenarios: ${SCENARIOS.join(', ')}`);
  }
  if (values.compare !== undefined && values.compare !== 'etcd') throw new Error(`--compare: only etcd is supported, got ${values.compare}`);
  const durationMs = parseDurationMs(values.duration);
  if (durationMs <= 0) throw new Error('--duration must be positive');
  return {
    scenarios: positionals.length ? [...new Set(positionals as ScenarioId[])] : [...SCENARIOS],
    clients: positiveInts('clients', values.clients),
    rounds: positiveInt('rounds', values.rounds),
    readClients: positiveInt('read-clients', values['read-clients']),
    durationMs,
    warmupMs: parseDurationMs(values.warmup),
    maxOps: positiveInt('max-ops', values['max-ops']),
    readSizes: positiveInts('read-sizes', values['read-sizes']),
    watchers: positiveInts('watchers', values.watchers),
    watchRate: positiveInt('watch-rate', values['watch-rate']),
    watchTransports: watchTransports(values['watch-transports']),
    watchSelective: values['watch-selective'] === '0' ? [] : positiveInts('watch-selective', values['watch-selective']),
    watchCatchUpMb: values['watch-catch-up'] === '0' ? 0 : positiveInt('watch-catch-up', values['watch-catch-up']),
    replayEntries: positiveInts('replay-entries', values['replay-entries']),
    memoryObjects: positiveInt('memory-objects', values['memory-objects']),
    streamListObjects: positiveInts('stream-list-objects', values['stream-list-objects']),
    listObjects: positiveInt('list-objects', values['list-objects']),
    policies: positiveInts('policies', values.policies),
    embedTests: positiveInt('embed-tests', values['embed-tests']),
    compareEtcd: values.compare === 'etcd',
    ceilings: !values['no-ceilings'],
    json: values.json,
    report: values.report,
    cpuProf: values['cpu-prof'],
    beforeCli: values['before-cli'],
    only: values.only === undefined ? [] : only(values.only),
    kubeconfigs: kubeconfigs(tokens),
  };
}
