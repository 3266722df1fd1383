/**
 * The package entry (`import { startOrchd } from 'orchd'`): orchd started inside a process, for the
 * tests of controllers and other clients. The `orchd` command is src/cli.ts.
 */
export {
  OrchdExpiredError,
  startOrchd,
  type ConfigDocument,
  type FaultConfiguration,
  type FaultHistoryEntry,
  type FaultRule,
  type InjectedFault,
  type Orchd,
  type OrchdConfig,
  type OrchdFaults,
  type OrchdObject,
  type OrchdStateOptions,
  type StartOrchdOptions,
} from './embed.js';
export type { HistoryEntry } from './store/past-reads.js';
export { kubeconfigYaml, type KubeconfigOptions } from './config/kubeconfig-yaml.js';
export type { Logger } from './observability/logger.js';
export type { StorageKind } from './serve.js';

/**
 * Moves what an older orchd kept in etcd under `orchd/` to kube-apiserver's layout (README, etcd).
 * The etcd client (and gRPC, protobufjs) is loaded by the call, not by importing orchd.
 */
export async function copyOldLayout(...args: Parameters<typeof import('./log/etcd/copy-old-layout.js').copyOldLayout>): Promise<number> {
  return (await import('./log/etcd/copy-old-layout.js')).copyOldLayout(...args);
}
