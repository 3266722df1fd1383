/**
 * The authorization attributes of a request, one row per rule of Kubernetes' RequestInfoFactory.
 */
import { describe, expect, it } from 'vitest';
import { requestAttributes } from '../../src/http/request-attributes.js';
import { ApiError } from '../../src/http/respond/status.js';
import { requestTarget } from '../../src/http/request-target.js';

const user = { username: 'alice', uid: '', groups: [], extra: {} };
const attrs = (method: string, path: string) => {
  const { user: _u, ...rest } = requestAttributes({ method }, requestTarget(path), user);
  return rest;
};
const resource = (verb: string, apiGroup: string, apiVersion: string, res: string, more: Record<string, string> = {}) => ({
  verb,
  isResourceRequest: true,
  apiGroup,
  apiVersion,
  resource: res,
  subresource: '',
  namespace: '',
  name: '',
  ...more,
});

const rows: { name: string; method: string; path: string; want: Record<string, unknown> }[] = [
  { name: 'version is a non-resource path', method: 'GET', path: '/version', want: { verb: 'get', isResourceRequest: false, path: '/version' } },
  { name: 'discovery roots are non-resource', method: 'GET', path: '/apis', want: { verb: 'get', isResourceRequest: false, path: '/apis' } },
  { name: 'a group-version document is non-resource', method: 'GET', path: '/api/v1', want: { verb: 'get', isResourceRequest: false, path: '/api/v1' } },
  { name: 'a named group is non-resource', method: 'GET', path: '/apis/apps/v1', want: { verb: 'get', isResourceRequest: false, path: '/apis/apps/v1' } },
  { name: 'openapi keeps its path, method lowercased', method: 'HEAD', path: '/openapi/v3/apis/apps/v1', want: { verb: 'head', isResourceRequest: false, path: '/openapi/v3/apis/apps/v1' } },
  { name: 'health', method: 'GET', path: '/healthz', want: { verb: 'get', isResourceRequest: false, path: '/healthz' } },
  {
    name: 'namespaced list',
    method: 'GET',
    path: '/api/v1/namespaces/default/events',
    want: { ...resource('list', '', 'v1', 'events', { namespace: 'default' }), path: '/api/v1/namespaces/default/events' },
  },
  {
    name: 'watch=true makes a list a watch, with its selectors',
    method: 'GET',
    path: '/apis/apps/v1/namespaces/ns/deployments?watch=true&labelSelector=app%3Dweb&fieldSelector=status.phase%3DRunning',
    want: { ...resource('watch', 'apps', 'v1', 'deployments', { namespace: 'ns' }), labelSelector: 'app=web', fieldSelector: 'status.phase=Running', path: '/apis/apps/v1/namespaces/ns/deployments' },
  },
  { name: 'watch=false stays a list', method: 'GET', path: '/api/v1/events?watch=false', want: { ...resource('list', '', 'v1', 'events'), path: '/api/v1/events' } },
  { name: 'watch=1 is a watch', method: 'GET', path: '/api/v1/events?watch=1', want: { ...resource('watch', '', 'v1', 'events'), path: '/api/v1/events' } },
  { name: 'an empty watch= is a watch', method: 'GET', path: '/api/v1/events?watch=', want: { ...resource('watch', '', 'v1', 'events'), path: '/api/v1/events' } },
  { name: 'watch=FALSE is a list', method: 'GET', path: '/api/v1/events?watch=FALSE', want: { ...resource('list', '', 'v1', 'events'), path: '/api/v1/events' } },
  {
    name: 'the /watch/ prefix is a watch, without selectors',
    method: 'GET',
    path: '/api/v1/watch/namespaces/default/events?labelSelector=a%3Db',
    want: { ...resource('watch', '', 'v1', 'events', { namespace: 'default' }), path: '/api/v1/watch/namespaces/default/events' },
  },
  {
    name: 'a list selecting one name by field names it',
    method: 'GET',
    path: '/api/v1/namespaces/default/events?fieldSelector=metadata.name%3Dx',
    want: { ...resource('list', '', 'v1', 'events', { namespace: 'default', name: 'x' }), fieldSelector: 'metadata.name=x', path: '/api/v1/namespaces/default/events' },
  },
  {
    name: 'get by name',
    method: 'GET',
    path: '/api/v1/namespaces/default/events/e1',
    want: { ...resource('get', '', 'v1', 'events', { namespace: 'default', name: 'e1' }), path: '/api/v1/namespaces/default/events/e1' },
  },
  {
    name: 'create',
    method: 'POST',
    path: '/api/v1/namespaces/default/events',
    want: { ...resource('create', '', 'v1', 'events', { namespace: 'default' }), path: '/api/v1/namespaces/default/events' },
  },
  {
    name: 'update',
    method: 'PUT',
    path: '/api/v1/namespaces/default/events/e1',
    want: { ...resource('update', '', 'v1', 'events', { namespace: 'default', name: 'e1' }), path: '/api/v1/namespaces/default/events/e1' },
  },
  {
    name: 'patch',
    method: 'PATCH',
    path: '/api/v1/namespaces/default/events/e1',
    want: { ...resource('patch', '', 'v1', 'events', { namespace: 'default', name: 'e1' }), path: '/api/v1/namespaces/default/events/e1' },
  },
  {
    name: 'delete',
    method: 'DELETE',
    path: '/api/v1/namespaces/default/events/e1',
    want: { ...resource('delete', '', 'v1', 'events', { namespace: 'default', name: 'e1' }), path: '/api/v1/namespaces/default/events/e1' },
  },
  {
    name: 'delete without a name is deletecollection, with selectors',
    method: 'DELETE',
    path: '/api/v1/namespaces/default/events?labelSelector=a',
    want: { ...resource('deletecollection', '', 'v1', 'events', { namespace: 'default' }), labelSelector: 'a', path: '/api/v1/namespaces/default/events' },
  },
  {
    name: 'a subresource',
    method: 'PUT',
    path: '/apis/admissionregistration.orch.io/v1/validatingadmissionpolicies/p/status',
    want: {
      ...resource('update', 'admissionregistration.orch.io', 'v1', 'validatingadmissionpolicies', { name: 'p', subresource: 'status' }),
      path: '/apis/admissionregistration.orch.io/v1/validatingadmissionpolicies/p/status',
    },
  },
  {
    name: 'a namespace is a cluster-scoped object',
    method: 'GET',
    path: '/api/v1/namespaces/team',
    want: { ...resource('get', '', 'v1', 'namespaces', { namespace: 'team', name: 'team' }), path: '/api/v1/namespaces/team' },
  },
  {
    name: "a namespace's status is its subresource",
    method: 'PUT',
    path: '/api/v1/namespaces/team/status',
    want: { ...resource('update', '', 'v1', 'namespaces', { namespace: 'team', name: 'team', subresource: 'status' }), path: '/api/v1/namespaces/team/status' },
  },
  { name: 'listing namespaces', method: 'GET', path: '/api/v1/namespaces', want: { ...resource('list', '', 'v1', 'namespaces'), path: '/api/v1/namespaces' } },
  {
    name: 'a resource orchd does not serve is still a resource request',
    method: 'GET',
    path: '/apis/x.io/v1/widgets',
    want: { ...resource('list', 'x.io', 'v1', 'widgets'), path: '/apis/x.io/v1/widgets' },
  },
  { name: 'an unknown method has no verb', method: 'OPTIONS', path: '/api/v1/events', want: { ...resource('', '', 'v1', 'events'), path: '/api/v1/events' } },
  // The path the router reads (request-target.ts): decoded once, then split, never normalised.
  {
    name: 'x/.. is not the collection: x with the subresource ..',
    method: 'DELETE',
    path: '/apis/g.io/v1/namespaces/ns/events/x/..',
    want: { ...resource('delete', 'g.io', 'v1', 'events', { namespace: 'ns', name: 'x', subresource: '..' }), path: '/apis/g.io/v1/namespaces/ns/events/x/..' },
  },
  {
    name: 'an encoded dot is the name .',
    method: 'DELETE',
    path: '/apis/g.io/v1/widgets/%2E',
    want: { ...resource('delete', 'g.io', 'v1', 'widgets', { name: '.' }), path: '/apis/g.io/v1/widgets/.' },
  },
  { name: 'an empty namespace stays empty', method: 'DELETE', path: '/api/v1/namespaces//events', want: { ...resource('deletecollection', '', 'v1', 'events'), path: '/api/v1/namespaces//events' } },
  // A list or watch there reads every namespace: authorized as the cluster-wide request it is.
  { name: 'a list at an empty namespace is cluster-wide', method: 'GET', path: '/api/v1/namespaces//events', want: { ...resource('list', '', 'v1', 'events'), path: '/api/v1/namespaces//events' } },
  {
    name: 'a watch at an empty namespace is cluster-wide',
    method: 'GET',
    path: '/api/v1/watch/namespaces//events',
    want: { ...resource('watch', '', 'v1', 'events'), path: '/api/v1/watch/namespaces//events' },
  },
  {
    name: 'an encoded slash separates segments once decoded, as in Kubernetes',
    method: 'GET',
    path: '/api/v1/namespaces/a%2Fevents/e1',
    want: { ...resource('get', '', 'v1', 'events', { namespace: 'a', name: 'e1' }), path: '/api/v1/namespaces/a/events/e1' },
  },
];

describe('request attributes', () => {
  for (const row of rows) {
    it(row.name, () => {
      expect(attrs(row.method, row.path)).toEqual(row.want);
    });
  }

  it('refuses a verb prefix with nothing after it, as Kubernetes does (500)', () => {
    expect(() => attrs('GET', '/api/v1/watch')).toThrow(ApiError);
    try {
      attrs('GET', '/api/v1/watch');
    } catch (err) {
      expect((err as ApiError).status.code).toBe(500);
    }
  });
});
