/**
 * The package entry (`import { startOrchd } from 'orchd'`): orchd started inside a process, for the
 * tests of controllers and other clients. The `orchd` command is src/cli.ts.
 */
export { startOrchd, type ConfigDocument, type Orchd, type OrchdConfig, type StartOrchdOptions } from './embed.js';
export type { HistoryEntry } from './store/history.js';
export { kubeconfigYaml, type KubeconfigOptions } from './config/kubeconfig-yaml.js';
export type { Logger } from './observability/logger.js';
export type { KubeObject } from './resources/types.js';
export type { StorageKind } from './serve.js';
export { copyOldLayout } from './log/etcd/copy-old-layout.js';
