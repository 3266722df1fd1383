/**
 * Lease (coordination.orch.io/v1): a lock with a holder and a term, for leader election. As
 * Kubernetes' lease strategy: a PUT may create one, and an update must carry its resourceVersion
 * (two candidates racing for it must not both win).
 */
import { FieldPath, invalid, type FieldError } from '../api/field-errors.js';
import { numberAt, objectAt, stringAt } from '../api/json-access.js';
import { kindSchema } from './kind-schema.js';
import { microTimeSchema } from './meta-schema.js';
import { int, obj, str } from '../api/schema.js';
import type { KindStrategy } from '../api/strategy.js';
import type { KubeObject } from '../api/types.js';

const COORDINATION_V1 = 'io.orch.api.coordination.v1';

const schema = kindSchema(`${COORDINATION_V1}.Lease`, 'A lease: who holds a lock, since when, and for how long.', {
  spec: obj(
    `${COORDINATION_V1}.LeaseSpec`,
    {
      acquireTime: microTimeSchema,
      holderIdentity: str('The holder of the lease.'),
      leaseDurationSeconds: int('How long candidates wait to force-acquire the lease, counted from the last renewTime.'),
      leaseTransitions: int('How many times the lease changed holders.'),
      preferredHolder: str('Signals to the holder that it should give the lease up to this one.'),
      renewTime: microTimeSchema,
      strategy: str('How the coordinated leader election chooses a holder.'),
    },
    { description: 'The specification of a lease.' },
  ),
});

/** ValidateLeaseSpec: a positive duration, transitions never negative, a preferred holder only with a strategy. */
function validate(o: KubeObject): FieldError[] {
  const spec = objectAt(o, 'spec');
  const p = FieldPath.root('spec');
  const errs: FieldError[] = [];
  const duration = numberAt(spec, 'leaseDurationSeconds');
  if (duration !== undefined && duration <= 0) errs.push(invalid(p.child('leaseDurationSeconds'), duration, 'must be greater than 0'));
  const transitions = numberAt(spec, 'leaseTransitions');
  if (transitions !== undefined && transitions < 0) errs.push(invalid(p.child('leaseTransitions'), transitions, 'must be greater than or equal to 0'));
  if (stringAt(spec, 'preferredHolder') !== '' && stringAt(spec, 'strategy') === '')
    errs.push(invalid(p.child('preferredHolder'), stringAt(spec, 'preferredHolder'), 'only allowed if strategy is set'));
  return errs;
}

export const lease = {
  group: 'coordination.orch.io',
  versions: ['v1'],
  kind: 'Lease',
  listKind: 'LeaseList',
  plural: 'leases',
  singular: 'lease',
  namespaced: true,
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: false,
  hasStatus: false,
  schema,
  applyDefaults() {},
  validate,
  tableColumns: [{ name: 'Holder', type: 'string', description: 'The holder of the lease.', priority: 0, cell: (o) => stringAt(objectAt(o, 'spec'), 'holderIdentity') }],
} satisfies KindStrategy;
