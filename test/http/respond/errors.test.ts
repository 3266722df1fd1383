/**
 * The one error table (src/http/respond/errors.ts): each room's coded error, row by row, as the
 * Status it is answered with — reason, code, message and details, worded as Kubernetes words them.
 */
import { describe, expect, it } from 'vitest';
import { AdmissionError, badRequest as admissionBadRequest, forbidden as admissionForbidden, internal as admissionInternal } from '../../../src/admission/errors.js';
import { webhookDenial } from '../../../src/admission/webhook-errors.js';
import { CorruptEntryError } from '../../../src/log/encryption/index.js';
import { PatchError } from '../../../src/patch/errors.js';
import * as R from '../../../src/registry/errors.js';
import { ROWS, toStatus } from '../../../src/http/respond/errors.js';
import { badRequest as httpBadRequest } from '../../../src/http/respond/status.js';
import { LogError } from '../../../src/log/log.js';
import { StoreError } from '../../../src/store/errors.js';
import { WatchError } from '../../../src/store/watch.js';

const policies = { group: 'admissionregistration.orch.io', resource: 'validatingadmissionpolicies', kind: 'ValidatingAdmissionPolicy', name: 'demo' };
const ns = { group: '', resource: 'namespaces', kind: 'Namespace', name: 'team' };
const failure = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure' };
const MODIFIED = 'the object has been modified; please apply your changes to the latest version and try again';

const rows: [string, unknown, Record<string, unknown>][] = [
  ['an ApiError of src/http as it is', httpBadRequest('bad'), { ...failure, code: 400, reason: 'BadRequest', message: 'bad' }],
  [
    'registry NotFound',
    R.notFound(policies),
    {
      ...failure,
      code: 404,
      reason: 'NotFound',
      message: 'validatingadmissionpolicies.admissionregistration.orch.io "demo" not found',
      details: { name: 'demo', group: 'admissionregistration.orch.io', kind: 'validatingadmissionpolicies' },
    },
  ],
  [
    'registry AlreadyExists (the core group is left out)',
    R.alreadyExists(ns),
    { ...failure, code: 409, reason: 'AlreadyExists', message: 'namespaces "team" already exists', details: { name: 'team', kind: 'namespaces' } },
  ],
  [
    'registry Conflict',
    R.conflict(ns, 'the object has been modified'),
    { ...failure, code: 409, reason: 'Conflict', message: 'Operation cannot be fulfilled on namespaces "team": the object has been modified', details: { name: 'team', kind: 'namespaces' } },
  ],
  [
    'registry Forbidden',
    R.forbidden(ns, 'being terminated'),
    { ...failure, code: 403, reason: 'Forbidden', message: 'namespaces "team" is forbidden: being terminated', details: { name: 'team', kind: 'namespaces' } },
  ],
  [
    'registry Invalid: one cause per field error, the kind in details',
    R.invalid(policies, [{ type: 'FieldValueRequired', field: 'spec.validations[0].expression', detail: '' }]),
    {
      ...failure,
      code: 422,
      reason: 'Invalid',
      message: 'ValidatingAdmissionPolicy.admissionregistration.orch.io "demo" is invalid: spec.validations[0].expression: Required value',
      details: {
        name: 'demo',
        group: 'admissionregistration.orch.io',
        kind: 'ValidatingAdmissionPolicy',
        causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.validations[0].expression' }],
      },
    },
  ],
  [
    'registry BadRequest',
    R.badRequest('resourceVersion should not be set on objects to be created'),
    { ...failure, code: 400, reason: 'BadRequest', message: 'resourceVersion should not be set on objects to be created' },
  ],
  [
    "registry CorruptObject: Kubernetes' StorageError text",
    R.corruptObject('/namespaces//team', 7, 'no provider'),
    {
      ...failure,
      code: 500,
      reason: 'InternalError',
      message:
        'Internal error occurred: StorageError: corrupt object, Code: 7, Key: /namespaces//team, ResourceVersion: 0, AdditionalErrorMsg: data from the storage is not transformable revision=7: no provider',
      details: {
        causes: [
          { message: 'StorageError: corrupt object, Code: 7, Key: /namespaces//team, ResourceVersion: 0, AdditionalErrorMsg: data from the storage is not transformable revision=7: no provider' },
        ],
      },
    },
  ],
  [
    'registry MethodNotAllowed: why, as the message',
    R.methodNotAllowed('create not allowed while custom resource definition is terminating'),
    { ...failure, code: 405, reason: 'MethodNotAllowed', message: 'create not allowed while custom resource definition is terminating' },
  ],
  [
    'registry Unavailable: retry after a second',
    R.unavailable('storage is unavailable: down'),
    { ...failure, code: 503, reason: 'ServiceUnavailable', message: 'storage is unavailable: down', details: { retryAfterSeconds: 1 } },
  ],
  [
    'registry Expired',
    R.expired('The resourceVersion for the provided list is too old.'),
    { ...failure, code: 410, reason: 'Expired', message: 'The resourceVersion for the provided list is too old.' },
  ],
  [
    'registry Expired continue: a token that goes on from the current state',
    R.expired('too old to continue', 'tok'),
    { ...failure, metadata: { continue: 'tok' }, code: 410, reason: 'Expired', message: 'too old to continue' },
  ],
  [
    'registry TooLargeResourceVersion, not waited for: no Retry-After',
    R.tooLargeResourceVersion(90, 12, 0),
    {
      ...failure,
      code: 504,
      reason: 'Timeout',
      message: 'Timeout: Too large resource version: 90, current: 12',
      details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] },
    },
  ],
  [
    'registry StorageReadError: each unreadable key a cause',
    R.storageReadError(ns, '/namespaces/', [{ key: '/namespaces//team', seq: 7, why: 'no provider' }]),
    {
      ...failure,
      code: 500,
      reason: 'StorageReadError',
      message: 'failed to read one or more namespaces from the storage',
      details: {
        kind: 'namespaces',
        name: '/namespaces/',
        causes: [
          {
            reason: 'UnexpectedServerResponse',
            message: 'StorageError: corrupt object, Code: 7, Key: /namespaces//team, ResourceVersion: 0, AdditionalErrorMsg: data from the storage is not transformable revision=7: no provider',
            field: '/namespaces//team',
          },
        ],
      },
    },
  ],
  ['registry Internal', R.internal('boom'), { ...failure, code: 500, reason: 'InternalError', message: 'Internal error occurred: boom', details: { causes: [{ message: 'boom' }] } }],
  [
    'admission Forbidden',
    admissionForbidden(policies, 'no'),
    {
      ...failure,
      code: 403,
      reason: 'Forbidden',
      message: 'validatingadmissionpolicies.admissionregistration.orch.io "demo" is forbidden: no',
      details: { name: 'demo', group: 'admissionregistration.orch.io', kind: 'validatingadmissionpolicies' },
    },
  ],
  [
    'admission Forbidden from a policy: its reason, code and causes',
    new AdmissionError('Forbidden', "ValidatingAdmissionPolicy 'p' denied request: x", {
      target: ns,
      reason: 'Invalid',
      status: 422,
      causes: [{ message: "ValidatingAdmissionPolicy 'p' denied request: x" }],
    }),
    {
      ...failure,
      code: 422,
      reason: 'Invalid',
      message: 'namespaces "team" is forbidden: ValidatingAdmissionPolicy \'p\' denied request: x',
      details: { name: 'team', kind: 'namespaces', causes: [{ message: "ValidatingAdmissionPolicy 'p' denied request: x" }] },
    },
  ],
  [
    'admission PolicyDenied: the first failure as the message',
    new AdmissionError('PolicyDenied', 'policy "m" denied request: a', {
      target: ns,
      reason: 'Forbidden',
      causes: [{ message: 'policy "m" denied request: a' }, { message: 'policy "m" denied request: b' }],
    }),
    {
      ...failure,
      code: 403,
      reason: 'Forbidden',
      message: 'policy "m" denied request: a',
      details: { name: 'team', kind: 'namespaces', causes: [{ message: 'policy "m" denied request: a' }, { message: 'policy "m" denied request: b' }] },
    },
  ],
  [
    "admission WebhookDenied: the webhook's own status",
    webhookDenial('w.example', { message: 'no way', reason: 'Teapot', code: 418, details: { name: 'x' } }),
    { ...failure, code: 418, reason: 'Teapot', message: 'admission webhook "w.example" denied the request: no way', details: { name: 'x' } },
  ],
  ['admission WebhookDenied with no code: 400', webhookDenial('w.example', {}), { ...failure, code: 400, message: 'admission webhook "w.example" denied the request without explanation' }],
  [
    'admission BadRequest',
    admissionBadRequest('admission webhook "w" does not support dry run'),
    { ...failure, code: 400, reason: 'BadRequest', message: 'admission webhook "w" does not support dry run' },
  ],
  [
    'admission Internal',
    admissionInternal('failed calling webhook'),
    { ...failure, code: 500, reason: 'InternalError', message: 'Internal error occurred: failed calling webhook', details: { causes: [{ message: 'failed calling webhook' }] } },
  ],
  ['patch BadPatch', new PatchError('BadPatch', 'unknown op "nope"'), { ...failure, code: 400, reason: 'BadRequest', message: 'unknown op "nope"' }],
  [
    'patch TooLarge',
    new PatchError('TooLarge', 'patch has too many operations'),
    { ...failure, code: 413, reason: 'RequestEntityTooLarge', message: 'Request entity too large: patch has too many operations', details: {} },
  ],
  [
    'patch Conflict: one cause per conflicting field',
    new PatchError('Conflict', 'ignored', [{ manager: { manager: 'kubectl', operation: 'Update', apiVersion: 'v1' }, path: '.spec.x' }]),
    {
      ...failure,
      code: 409,
      reason: 'Conflict',
      message: 'Apply failed with 1 conflict: conflict with "kubectl" using v1: .spec.x',
      details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl" using v1', field: '.spec.x' }] },
    },
  ],
  [
    'patch Unprocessable',
    new PatchError('Unprocessable', 'not an object'),
    { ...failure, code: 422, reason: 'Invalid', message: 'the server rejected our request due to an error in our request: not an object', details: {} },
  ],
  [
    'log CorruptEntryError',
    new CorruptEntryError('/events/ns/e', 3, 'bad tag'),
    {
      ...failure,
      code: 500,
      reason: 'InternalError',
      message:
        'Internal error occurred: StorageError: corrupt object, Code: 7, Key: /events/ns/e, ResourceVersion: 0, AdditionalErrorMsg: data from the storage is not transformable revision=3: bad tag',
      details: {
        causes: [{ message: 'StorageError: corrupt object, Code: 7, Key: /events/ns/e, ResourceVersion: 0, AdditionalErrorMsg: data from the storage is not transformable revision=3: bad tag' }],
      },
    },
  ],
  [
    "store KEY_EXISTS: about the key's object",
    new StoreError('KEY_EXISTS', 'events.orch.io/events/ns/e', 'key exists at 4', 4),
    { ...failure, code: 409, reason: 'AlreadyExists', message: 'events.events.orch.io "e" already exists', details: { name: 'e', group: 'events.orch.io', kind: 'events' } },
  ],
  [
    'store NOT_FOUND',
    new StoreError('NOT_FOUND', '/namespaces//team', 'key not found'),
    { ...failure, code: 404, reason: 'NotFound', message: 'namespaces "team" not found', details: { name: 'team', kind: 'namespaces' } },
  ],
  [
    'store CONFLICT',
    new StoreError('CONFLICT', '/namespaces//team', 'key is at 5, not 4', 5),
    { ...failure, code: 409, reason: 'Conflict', message: `Operation cannot be fulfilled on namespaces "team": ${MODIFIED}`, details: { name: 'team', kind: 'namespaces' } },
  ],
  [
    'store TOO_MANY_RETRIES',
    new StoreError('TOO_MANY_RETRIES', '/namespaces//team', 'too many concurrent writes'),
    { ...failure, code: 409, reason: 'Conflict', message: `Operation cannot be fulfilled on namespaces "team": ${MODIFIED}`, details: { name: 'team', kind: 'namespaces' } },
  ],
  ['store COMPACTED', new StoreError('COMPACTED', '', 'version 3 is compacted', 3), { ...failure, code: 410, reason: 'Expired', message: 'too old resource version: 3' }],
  [
    'store FUTURE_SEQ',
    new StoreError('FUTURE_SEQ', '/k', 'version 9 is newer than 3', 9),
    { ...failure, code: 504, reason: 'Timeout', message: 'Timeout: version 9 is newer than 3', details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] } },
  ],
  [
    'log UNAVAILABLE: retry after a second',
    new LogError('UNAVAILABLE', 'etcd down'),
    { ...failure, code: 503, reason: 'ServiceUnavailable', message: 'storage is unavailable: etcd down', details: { retryAfterSeconds: 1 } },
  ],
  ['log CONFLICT', new LogError('CONFLICT', 'moved', 8), { ...failure, code: 409, reason: 'Conflict', message: `Operation cannot be fulfilled: ${MODIFIED}`, details: {} }],
  [
    'log CLOSED',
    new LogError('CLOSED', 'the log is closed'),
    { ...failure, code: 503, reason: 'ServiceUnavailable', message: 'storage is closed: the log is closed', details: { retryAfterSeconds: 1 } },
  ],
  ['log COMPACTED', new LogError('COMPACTED', 'gone', 2), { ...failure, code: 410, reason: 'Expired', message: 'too old resource version: 2' }],
  [
    'log FUTURE_SEQ',
    new LogError('FUTURE_SEQ', 'seq 9 is past 3', 9),
    { ...failure, code: 504, reason: 'Timeout', message: 'Timeout: seq 9 is past 3', details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] } },
  ],
  [
    'watch COMPACTED: 410 with the oldest version kept',
    new WatchError('COMPACTED', 3, 7, 'version 3 is compacted'),
    { ...failure, code: 410, reason: 'Expired', message: 'too old resource version: 3 (7)' },
  ],
  [
    'watch TOO_LARGE_VERSION: 504 with Retry-After',
    new WatchError('TOO_LARGE_VERSION', 90, 12, 'not yet'),
    {
      ...failure,
      code: 504,
      reason: 'Timeout',
      message: 'Timeout: Too large resource version: 90, current: 12',
      details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
    },
  ],
  [
    'watch STALLED: 500 carrying the last version delivered, so the client resumes from it',
    new WatchError('STALLED', 41, 50, 'the watcher did not read for 60s'),
    {
      ...failure,
      metadata: { resourceVersion: '41' },
      code: 500,
      reason: 'InternalError',
      message: 'Internal error occurred: watch closed: the watcher did not read for 60s',
      details: { causes: [{ message: 'watch closed: the watcher did not read for 60s' }] },
    },
  ],
];

describe('the error table', () => {
  it.each(rows)('%s', (_name, err, status) => {
    expect(toStatus(err)).toEqual(status);
  });

  it('has a tested row for every row it holds', () => {
    const tested = new Set(rows.map(([, err]) => ROWS.findIndex((r) => err instanceof r.error && (r.code === undefined || (err as { code?: string }).code === r.code))));
    expect([...tested].sort((a, b) => a - b)).toEqual(ROWS.map((_r, i) => i));
  });

  it('anything else is a 500 that says only its message', () => {
    expect(toStatus(new LogError('BROKEN', 'the disk is full'))).toMatchObject({ code: 500, reason: 'InternalError', message: 'Internal error occurred: the disk is full' });
    expect(toStatus('text')).toMatchObject({ code: 500, reason: 'InternalError', message: 'Internal error occurred: text' });
  });
});
