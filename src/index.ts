/**
 * The package entry (`import { startOrchd } from 'orchd'`): orchd started inside a process, for the
 * tests of controllers and other clients. The `orchd` command is src/cli.ts.
 */
export { OrchdExpiredError, startOrchd, type ConfigDocument, type Orchd, type OrchdConfig, type OrchdObject, type StartOrchdOptions } from './embed.js';
export type { HistoryEntry } from './store/history.js';
export { kubeconfigYaml, type KubeconfigOptions } from './config/kubeconfig-yaml.js';
export type { Logger } from './observability/logger.js';
export type { StorageKind } from './serve.js';
export { copyOldLayout } from './log/etcd/copy-old-layout.js';
