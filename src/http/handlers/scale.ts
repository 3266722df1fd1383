/**
 * The /scale subresource of a kind that has one (a CRD's): an autoscaling/v1 Scale read from and
 * written to the object's replica paths, as kube-apiserver serves it to `kubectl scale` and
 * autoscalers. A write changes only the desired replicas (a main-resource update, so admission and
 * validation see it), under the Scale's resourceVersion when it carries one.
 */
import { patchObject } from '../../registry/patch-object.js';
import { managerFromUserAgent, trackUpdate } from '../../registry/field-manager.js';
import { cloneJson, isObject } from '../../api/json-access.js';
import { qualified } from '../../api/qualified.js';
import type { ScaleSubresource } from '../../api/strategy.js';
import type { KubeObject } from '../../api/types.js';
import { patchMediaTypesOf } from './patch.js';
import { decodeBody, OBJECT_MEDIA_TYPES, readBody } from '../codec/body.js';
import * as Q from '../codec/query.js';
import type { Request } from '../context.js';
import { send } from '../respond/respond.js';
import * as E from '../respond/status.js';
import { statusOrMain } from '../router.js';

const path = (p: string): string[] => p.replace(/^\./, '').split('.');

function valueAt(obj: unknown, p: string): unknown {
  let v = obj;
  for (const n of path(p)) v = isObject(v) ? v[n] : undefined;
  return v;
}

function setAt(obj: Record<string, unknown>, p: string, value: unknown): void {
  const names = path(p);
  let v = obj;
  for (const n of names.slice(0, -1)) {
    if (!isObject(v[n])) v[n] = {};
    v = v[n] as Record<string, unknown>;
  }
  v[names[names.length - 1]!] = value;
}

/** The Scale of an object. */
export function scaleOf(obj: KubeObject, scale: ScaleSubresource): KubeObject {
  const m = obj.metadata;
  const selector = scale.labelSelectorPath ? valueAt(obj, scale.labelSelectorPath) : undefined;
  const specReplicas = valueAt(obj, scale.specReplicasPath);
  const statusReplicas = valueAt(obj, scale.statusReplicasPath);
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: {
      name: m.name,
      ...(m.namespace ? { namespace: m.namespace } : {}),
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    spec: { replicas: typeof specReplicas === 'number' ? specReplicas : 0 },
    status: { replicas: typeof statusReplicas === 'number' ? statusReplicas : 0, ...(typeof selector === 'string' ? { selector } : {}) },
  };
}

/** GET, PUT or PATCH of /scale. Returns the verb for metrics. */
export async function handleScale(r: Request): Promise<string> {
  const { route, server } = r;
  const scale = route.kind.scale!;
  const method = r.req.method ?? 'GET';
  if (method === 'GET') {
    const stored = server.objects.get(route.kind, route.namespace, route.name!);
    send(r.res, 200, scaleOf(stored.obj, scale), r.out);
    return 'GET';
  }
  if (method !== 'PUT' && method !== 'PATCH') throw E.methodNotAllowed(method);
  const body = decodeBody(await readBody(r.req), r.req.headers['content-type'], { accept: method === 'PUT' ? OBJECT_MEDIA_TYPES : patchMediaTypesOf(route.kind) });
  const opts = Q.updateOptions(r.url.searchParams);
  const manager = opts.fieldManager ?? managerFromUserAgent(r.req.headers['user-agent']);
  const target = statusOrMain({ ...route, subresource: undefined });
  const transform = (cur: KubeObject | undefined): KubeObject => {
    if (!cur) throw E.notFound(qualified(route.kind, route.name));
    const wanted = method === 'PUT' ? body.value : patchedScale(body.mediaType, scaleOf(cur, scale), body.value);
    if (!isObject(wanted)) throw E.badRequest(`Object 'Scale' is missing in '${JSON.stringify(wanted)}'`);
    const replicas = isObject(wanted.spec) ? wanted.spec.replicas : undefined;
    const next = cloneJson(cur);
    if (replicas !== undefined) setAt(next, scale.specReplicasPath, replicas);
    const rv = isObject(wanted.metadata) ? wanted.metadata.resourceVersion : undefined;
    next.metadata.resourceVersion = typeof rv === 'string' && rv !== '' ? rv : cur.metadata.resourceVersion;
    trackUpdate({ ...target, at: server.objects.clock.now() }, cur, next, manager);
    return next;
  };
  const { obj } = await server.objects.update(route.kind, route.namespace, route.name!, transform, { dryRun: opts.dryRun });
  send(r.res, 200, scaleOf(obj, scale), r.out);
  return method;
}

function patchedScale(mediaType: string, current: KubeObject, patch: unknown): unknown {
  switch (mediaType) {
    case 'application/json-patch+json':
      return patchObject('json', current, patch);
    case 'application/merge-patch+json':
      return patchObject('merge', current, patch);
    default:
      throw E.unsupportedMediaType(mediaType);
  }
}
