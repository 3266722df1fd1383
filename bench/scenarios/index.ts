/** Every scenario, in the order a full run goes through them. */
import type { Scenario } from '../context.js';
import type { ScenarioId } from '../options.js';
import { admission } from './admission.js';
import { authz } from './authz.js';
import { crd } from './crd.js';
import { embed } from './embed.js';
import { encryption } from './encryption.js';
import { lists } from './lists.js';
import { memoryScenario } from './memory.js';
import { paced } from './paced.js';
import { patch } from './patch.js';
import { reads } from './reads.js';
import { replay } from './replay.js';
import { replicasScenario } from './replicas.js';
import { timetravel } from './timetravel.js';
import { watch } from './watch.js';
import { writes } from './writes.js';

export const scenarios: Record<ScenarioId, Scenario> = {
  writes,
  reads,
  watch,
  replay,
  memory: memoryScenario,
  patch,
  lists,
  admission,
  authz,
  encryption,
  embed,
  timetravel,
  replicas: replicasScenario,
  crd,
  paced,
};
