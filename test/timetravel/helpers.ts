import { Writable } from 'node:stream';
import { CustomObjectsApi, makeInformer, type Informer, type KubernetesListObject, type KubernetesObject, type ObjectCache } from '@kubernetes/client-node';
import { runOrchd } from '../../src/cli/orchd.js';
import { kubeConfigFor } from '../helpers/client-node.js';
import { startReplay, type ReplayOptions, type Replaying } from '../../src/timetravel/replay/server.js';
import { openHistory } from '../../src/timetravel/core/source.js';
import { EVENTS } from '../watch/objects.js';

export interface Run {
  code: number;
  out: string;
  err: string;
}

/** A stream that keeps what is written to it, as text. */
export function sink(): Writable & { text: string } {
  const w = new Writable({
    write(chunk, _enc, cb) {
      w.text += String(chunk);
      cb();
    },
  }) as Writable & { text: string };
  w.text = '';
  return w;
}

/** Runs an `orchd` command in this process, its output into out. */
export async function runOn(out: Writable & { text: string }, command: string, ...args: string[]): Promise<Run> {
  const err = sink();
  const code = await runOrchd([command, ...args], { out, err });
  return { code, out: out.text, err: err.text };
}

export const run = (command: string, ...args: string[]): Promise<Run> => runOn(sink(), command, ...args);

export { kubeConfigFor };

/**
 * A client-node informer on the Events of one namespace of the server at url: what it sees, as
 * `TYPE <namespace>/<name> <resourceVersion>` lines, and its errors.
 */
export function eventInformer(url: string, ns: string): { informer: Informer<KubernetesObject> & ObjectCache<KubernetesObject>; seen: string[]; errors: unknown[] } {
  const kc = kubeConfigFor(url);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const informer = makeInformer(
    kc,
    `${EVENTS}/namespaces/${ns}/events`,
    () => custom.listNamespacedCustomObject({ group: 'events.orch.io', version: 'v1', namespace: ns, plural: 'events' }) as Promise<KubernetesListObject<KubernetesObject>>,
  );
  const seen: string[] = [];
  const errors: unknown[] = [];
  const verbs = { add: 'ADDED', update: 'MODIFIED', delete: 'DELETED' } as const;
  for (const [verb, type] of Object.entries(verbs)) {
    informer.on(verb as keyof typeof verbs, (o: KubernetesObject) => seen.push(`${type} ${ns}/${o.metadata?.name} ${o.metadata?.resourceVersion}`));
  }
  informer.on('error', (err) => errors.push(err));
  return { informer, seen, errors };
}

/** A replay of the history the source flags name (a data folder or a recording), as `orchd replay` starts it. */
export async function startReplayOf(source: { 'data-dir'?: string; file?: string; 'encryption-provider-config'?: string }, opts: Omit<ReplayOptions, 'history'>): Promise<Replaying> {
  return startReplay({ ...opts, history: await openHistory(source) });
}
