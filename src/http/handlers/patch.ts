/**
 * PATCH of an object or its /status with the four patch types Kubernetes serves, chosen by
 * Content-Type: JSON patch, merge patch, strategic merge patch and server-side apply. The patch is
 * applied inside the store's retry loop to the latest object, so a patch never fails on a write
 * race (last write wins) unless it carries metadata.resourceVersion itself. Every non-apply patch
 * is an Update for managedFields; apply tracks ownership and conflicts (both recorded by the registry's
 * field manager, src/registry/field-manager.ts).
 */
import { patchObject } from '../../registry/patch-object.js';
import { isObject } from '../../api/json-access.js';
import { qualified } from '../../api/qualified.js';
import type { KindStrategy } from '../../api/strategy.js';
import type { KubeObject } from '../../api/types.js';
import { APPLY_PATCH, decodeBody, PATCH_MEDIA_TYPES, readBody, type BodyMediaType } from '../codec/body.js';
import type { Request } from '../context.js';
import { checkObject } from '../codec/decode-object.js';
import { fieldManagerOf } from '../codec/field-manager.js';
import * as Q from '../codec/query.js';
import { sendObject } from '../respond/render.js';
import { addWarnings } from '../respond/respond.js';
import * as E from '../respond/status.js';

/**
 * The name and namespace in a body must be the URL's, or absent. An absent name stays absent in a
 * patched object (a JSON patch removing /metadata): validation refuses it (422), as Kubernetes does.
 */
function checkIdentity(r: Request, obj: KubeObject): void {
  const { route } = r;
  if (obj.metadata.name !== undefined && obj.metadata.name !== route.name) {
    throw E.badRequest(`the name of the object (${String(obj.metadata.name)}) does not match the name on the URL (${route.name ?? ''})`);
  }
  if (obj.metadata.namespace && route.namespace !== undefined && obj.metadata.namespace !== route.namespace) {
    throw E.badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
}

/** An apply configuration may leave its name out: the URL names it. */
function named(r: Request, obj: KubeObject): KubeObject {
  checkIdentity(r, obj);
  obj.metadata.name = r.route.name;
  return obj;
}

/**
 * An apply configuration names its apiVersion, the path's exactly, and its kind (Kubernetes' field
 * manager refuses a version other than its own; a configuration without a kind it cannot type).
 * A body that is no object is left to checkObject, which words it.
 */
function checkApplyTypeMeta(r: Request, value: unknown): void {
  if (!isObject(value)) return;
  const { kind, version } = r.route;
  const expected = kind.group ? `${kind.group}/${version}` : version;
  if (value.apiVersion !== expected) {
    const specified = typeof value.apiVersion === 'string' ? value.apiVersion : '';
    throw E.badRequest(`Incorrect version specified in apply patch. Specified patch version: ${specified}, expected: ${expected}`);
  }
  if (value.kind === undefined || value.kind === '') throw E.badRequest(`kind must be specified in an apply patch: expected ${kind.kind}`);
}

function patched(mediaType: BodyMediaType, current: KubeObject, patch: unknown, r: Request): unknown {
  switch (mediaType) {
    case 'application/json-patch+json':
      return patchObject('json', current, patch);
    case 'application/merge-patch+json':
      return patchObject('merge', current, patch);
    case 'application/strategic-merge-patch+json':
      return patchObject('strategic', current, patch, r.route.kind.schema);
    default:
      throw E.unsupportedMediaType(mediaType);
  }
}

const NO_STRATEGIC: readonly BodyMediaType[] = PATCH_MEDIA_TYPES.filter((t) => t !== 'application/strategic-merge-patch+json');

/**
 * The patch types a kind takes. A custom resource's schema names no patch strategies, so
 * kube-apiserver takes no strategic merge for it (415): merging its lists by guesswork would
 * silently replace them.
 */
export const patchMediaTypesOf = (kind: KindStrategy): readonly BodyMediaType[] => (kind.strategicMergePatch === false ? NO_STRATEGIC : PATCH_MEDIA_TYPES);

export async function handlePatch(r: Request): Promise<void> {
  const { route, server, req } = r;
  const body = decodeBody(await readBody(req), req.headers['content-type'], { accept: patchMediaTypesOf(route.kind) });
  const opts = Q.patchOptions(r.url.searchParams, body.mediaType);
  const fieldManager = fieldManagerOf(r, opts.fieldManager);
  const common = { dryRun: opts.dryRun, fieldManager, ...(route.subresource === 'status' ? { subresource: route.subresource } : {}) };

  if (body.mediaType === APPLY_PATCH) {
    checkApplyTypeMeta(r, body.value);
    // Unknown fields of a configuration are dropped (or refused) before it claims any field.
    const checked = checkObject(route.kind, route.version, body.value, body.duplicates, opts.fieldValidation);
    const { obj, created, json } = await server.objects.apply(route.kind, route.namespace, route.name!, named(r, checked.obj), { ...common, force: opts.force });
    addWarnings(r.res, checked.warnings);
    return sendObject(r, created ? 201 : 200, obj, json);
  }

  let warnings: string[] = [];
  const transform = (cur: KubeObject | undefined): KubeObject => {
    if (!cur) throw E.notFound(qualified(route.kind, route.name));
    const checked = checkObject(route.kind, route.version, patched(body.mediaType, cur, body.value, r), body.duplicates, opts.fieldValidation);
    warnings = checked.warnings;
    checkIdentity(r, checked.obj);
    return checked.obj;
  };
  const { obj, created, json } = await server.objects.update(route.kind, route.namespace, route.name!, transform, common);
  addWarnings(r.res, warnings);
  sendObject(r, created ? 201 : 200, obj, json);
}
