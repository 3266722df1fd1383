import { describe, expect, it } from 'vitest';
import { parseAccept } from '../../src/discovery/accept.js';
import { aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList, apiVersions, discoveryDocuments, negotiateDiscovery, storageVersionHash, versionInfo } from '../../src/discovery/discovery.js';
import { compareVersions } from '../../src/discovery/group-versions.js';
import { notModified } from '../../src/discovery/served.js';
import { fixtureKinds, gadget, shelf, widget } from '../helpers/fixture-kinds.js';

/** The Accept headers kubectl sends for /api and /apis (clients.md 1.3). */
const KUBECTL_127 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
const KUBECTL_133 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
const V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const V2BETA1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';

describe('parseAccept', () => {
  const cases: [string, string | undefined, { type: string; subtype: string; params: Record<string, string>; q: number }[]][] = [
    ['absent header', undefined, []],
    ['empty header', '', []],
    [
      'kubectl 1.27 discovery, in the order written',
      KUBECTL_127,
      [
        { type: 'application', subtype: 'json', params: { g: 'apidiscovery.k8s.io', v: 'v2beta1', as: 'APIGroupDiscoveryList' }, q: 1 },
        { type: 'application', subtype: 'json', params: {}, q: 1 },
      ],
    ],
    [
      'q sorts first, then specificity, then order',
      '*/*;q=0.5, text/*, application/json;q=0.8, text/plain',
      [
        { type: 'text', subtype: 'plain', params: {}, q: 1 },
        { type: 'text', subtype: '*', params: {}, q: 1 },
        { type: 'application', subtype: 'json', params: {}, q: 0.8 },
        { type: '*', subtype: '*', params: {}, q: 0.5 },
      ],
    ],
    ['q=0 means not acceptable', 'application/json;q=0, application/yaml', [{ type: 'application', subtype: 'yaml', params: {}, q: 1 }]],
    ['spaces and case', ' Application/JSON ; AS=Table ; q=1 ', [{ type: 'application', subtype: 'json', params: { as: 'Table' }, q: 1 }]],
    [
      'quoted values may hold separators',
      'a/b;x="1,2;3", c/d',
      [
        { type: 'a', subtype: 'b', params: { x: '1,2;3' }, q: 1 },
        { type: 'c', subtype: 'd', params: {}, q: 1 },
      ],
    ],
    [
      'the protobuf OpenAPI name kubectl sends (with @)',
      'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
      [{ type: 'application', subtype: 'com.github.proto-openapi.spec.v2@v1.0+protobuf', params: {}, q: 1 }],
    ],
    ['malformed ranges are dropped', 'json, /x, */json, a/b', [{ type: 'a', subtype: 'b', params: {}, q: 1 }]],
  ];
  it.each(cases)('%s', (_name, header, want) => {
    expect(parseAccept(header)).toEqual(want);
  });
});

describe('negotiateDiscovery', () => {
  const cases: [string, string | undefined, string][] = [
    ['kubectl 1.27-1.29 get v2beta1', KUBECTL_127, `aggregated v2beta1 ${V2BETA1}`],
    ['kubectl 1.30+ get v2', KUBECTL_133, `aggregated v2 ${V2}`],
    ['only v2 offered', V2, `aggregated v2 ${V2}`],
    ['the client order decides between versions', `${V2BETA1},${V2}`, `aggregated v2beta1 ${V2BETA1}`],
    ['q decides over order', `${V2BETA1};q=0.5,${V2}`, `aggregated v2 ${V2}`],
    ['aggregated wins over plain JSON listed first (as kube-apiserver)', `application/json,${V2}`, `aggregated v2 ${V2}`],
    ['q=0 refuses a version', `${V2};q=0,${V2BETA1}`, `aggregated v2beta1 ${V2BETA1}`],
    ['an unknown version is legacy', 'application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList', 'legacy application/json'],
    ['another group is legacy', 'application/json;g=apidiscovery.orch.io;v=v2;as=APIGroupDiscoveryList', 'legacy application/json'],
    ['plain JSON is legacy', 'application/json, */*', 'legacy application/json'],
    ['no Accept is legacy', undefined, 'legacy application/json'],
  ];
  it.each(cases)('%s', (_name, accept, want) => {
    const form = negotiateDiscovery(accept);
    expect(form.form === 'aggregated' ? `aggregated ${form.version} ${form.contentType}` : `legacy ${form.contentType}`).toBe(want);
  });
});

describe('versionInfo', () => {
  it('reports Kubernetes v1.36.0 in the shape of kube-apiserver', () => {
    const v = versionInfo({ platform: 'linux/amd64' });
    expect(v).toMatchObject({ major: '1', minor: '36', gitVersion: 'v1.36.0', gitTreeState: 'clean', platform: 'linux/amd64', emulationMajor: '1', emulationMinor: '36' });
    // Clients (python-kubernetes' VersionInfo) require every field to be a string.
    for (const key of ['major', 'minor', 'gitVersion', 'gitCommit', 'gitTreeState', 'buildDate', 'goVersion', 'compiler', 'platform'] as const) expect(typeof v[key]).toBe('string');
  });
  it('names the platform with Go names', () => {
    expect(versionInfo().platform).toMatch(/^[a-z0-9]+\/[a-z0-9]+$/);
  });
});

describe('version priority', () => {
  it('orders as Kubernetes: GA, beta, alpha, then anything else', () => {
    expect(['v1alpha1', 'foo', 'v1beta1', 'v2', 'v1', 'v1beta2', 'v10', 'v2alpha1'].sort(compareVersions)).toEqual(['v10', 'v2', 'v1', 'v1beta2', 'v1beta1', 'v2alpha1', 'v1alpha1', 'foo']);
  });
});

describe('legacy discovery', () => {
  it('storageVersionHash is kube-apiserver’s (pods hash to xPOwRZ+Yhw8=)', () => {
    expect(storageVersionHash({ ...shelf, kind: 'Pod' })).toBe('xPOwRZ+Yhw8=');
  });

  it('/api lists the core versions and the server address', () => {
    expect(apiVersions(fixtureKinds, '10.0.0.1:6443')).toEqual({
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '10.0.0.1:6443' }],
    });
  });

  it('/apis lists named groups with their versions, preferred first', () => {
    expect(apiGroupList(fixtureKinds)).toEqual({
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [
        {
          name: 'example.orch.io',
          versions: [
            { groupVersion: 'example.orch.io/v1', version: 'v1' },
            { groupVersion: 'example.orch.io/v1beta1', version: 'v1beta1' },
          ],
          preferredVersion: { groupVersion: 'example.orch.io/v1', version: 'v1' },
        },
      ],
    });
  });

  it('/apis/<group> answers known groups only', () => {
    expect(apiGroup(fixtureKinds, 'example.orch.io')).toMatchObject({ kind: 'APIGroup', apiVersion: 'v1', name: 'example.orch.io' });
    expect(apiGroup(fixtureKinds, 'nope.orch.io')).toBeUndefined();
    expect(apiGroup(fixtureKinds, '')).toBeUndefined();
  });

  it('/apis/<group>/<version> lists resources and their status subresources', () => {
    const verbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
    expect(apiResourceList(fixtureKinds, 'example.orch.io', 'v1')).toEqual({
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'example.orch.io/v1',
      resources: [
        { name: 'gadgets', singularName: 'gadget', namespaced: false, kind: 'Gadget', verbs, storageVersionHash: storageVersionHash(gadget) },
        { name: 'gadgets/status', singularName: '', namespaced: false, kind: 'Gadget', verbs: ['get', 'patch', 'update'] },
        { name: 'widgets', singularName: 'widget', namespaced: true, kind: 'Widget', verbs, shortNames: ['wd'], categories: ['all'], storageVersionHash: storageVersionHash(widget) },
      ],
    });
    expect(apiResourceList(fixtureKinds, 'example.orch.io', 'v1beta1')?.resources.map((r) => r.name)).toEqual(['widgets']);
    expect(apiResourceList(fixtureKinds, '', 'v1')?.groupVersion).toBe('v1');
    expect(apiResourceList(fixtureKinds, 'example.orch.io', 'v2')).toBeUndefined();
  });
});

describe('aggregated discovery', () => {
  it.each(['v2', 'v2beta1'] as const)('/apis in %s: every named group, versions by priority, resources sorted', (version) => {
    const doc = aggregatedDiscovery(fixtureKinds, 'apis', version);
    expect(doc.kind).toBe('APIGroupDiscoveryList');
    expect(doc.apiVersion).toBe(`apidiscovery.k8s.io/${version}`);
    expect(doc.items).toHaveLength(1);
    const [group] = doc.items;
    expect(group.metadata).toEqual({ name: 'example.orch.io', creationTimestamp: null });
    expect(group.versions.map((v) => [v.version, v.freshness, v.resources.map((r) => r.resource)])).toEqual([
      ['v1', 'Current', ['gadgets', 'widgets']],
      ['v1beta1', 'Current', ['widgets']],
    ]);
    expect(group.versions[0].resources).toEqual([
      {
        resource: 'gadgets',
        responseKind: { group: 'example.orch.io', version: 'v1', kind: 'Gadget' },
        scope: 'Cluster',
        singularResource: 'gadget',
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        subresources: [{ subresource: 'status', responseKind: { group: 'example.orch.io', version: 'v1', kind: 'Gadget' }, verbs: ['get', 'patch', 'update'] }],
      },
      {
        resource: 'widgets',
        responseKind: { group: 'example.orch.io', version: 'v1', kind: 'Widget' },
        scope: 'Namespaced',
        singularResource: 'widget',
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        shortNames: ['wd'],
        categories: ['all'],
      },
    ]);
    expect(group.versions[1].resources[0].responseKind.version).toBe('v1beta1');
  });

  it('/api: the core group as one item without a name', () => {
    const doc = aggregatedDiscovery(fixtureKinds, 'api', 'v2');
    expect(doc.items).toHaveLength(1);
    expect(doc.items[0].metadata).toEqual({ creationTimestamp: null });
    expect(doc.items[0].versions[0].resources.map((r) => [r.resource, r.responseKind.group, r.scope, r.shortNames])).toEqual([['shelves', '', 'Cluster', ['sh']]]);
  });
});

describe('discoveryDocuments', () => {
  const docs = discoveryDocuments(fixtureKinds);

  it('is built once per registry', () => {
    expect(discoveryDocuments(fixtureKinds)).toBe(docs);
    expect(docs.root('apis', KUBECTL_133)).toBe(docs.root('apis', KUBECTL_133));
  });

  const cases: [string, 'api' | 'apis', string | undefined, string, string][] = [
    ['kubectl 1.33 /apis', 'apis', KUBECTL_133, V2, 'apidiscovery.k8s.io/v2'],
    ['kubectl 1.27 /apis', 'apis', KUBECTL_127, V2BETA1, 'apidiscovery.k8s.io/v2beta1'],
    ['kubectl 1.27 /api', 'api', KUBECTL_127, V2BETA1, 'apidiscovery.k8s.io/v2beta1'],
    ['plain /apis', 'apis', 'application/json, */*', 'application/json', 'v1'],
  ];
  it.each(cases)('%s answers with the matching body and Content-Type', (_name, path, accept, contentType, apiVersion) => {
    const answer = docs.root(path, accept);
    expect(answer.contentType).toBe(contentType);
    expect(JSON.parse(answer.body as string).apiVersion).toBe(apiVersion);
  });

  it('plain /api is APIVersions with the given address', () => {
    const answer = docs.root('api', 'application/json', '192.0.2.1:443');
    expect(JSON.parse(answer.body as string)).toMatchObject({ kind: 'APIVersions', serverAddressByClientCIDRs: [{ serverAddress: '192.0.2.1:443' }] });
  });

  it('serves groups and group-versions that exist, and nothing else', () => {
    expect(JSON.parse(docs.group('example.orch.io')?.body as string).kind).toBe('APIGroup');
    expect(JSON.parse(docs.groupVersion('', 'v1')?.body as string).groupVersion).toBe('v1');
    expect(JSON.parse(docs.groupVersion('example.orch.io', 'v1beta1')?.body as string).groupVersion).toBe('example.orch.io/v1beta1');
    expect(docs.group('')).toBeUndefined();
    expect(docs.group('nope.orch.io')).toBeUndefined();
    expect(docs.groupVersion('example.orch.io', 'v9')).toBeUndefined();
    expect(docs.groupVersion('', 'v2')).toBeUndefined();
  });

  it('answers /version', () => {
    expect(JSON.parse(docs.version.body as string).gitVersion).toBe('v1.36.0');
  });

  it('gives stable ETags a client can revalidate with If-None-Match', () => {
    const again = discoveryDocuments([...fixtureKinds]).root('apis', KUBECTL_133);
    const first = docs.root('apis', KUBECTL_133);
    expect(again.etag).toBe(first.etag);
    expect(first.etag).toMatch(/^[0-9A-F]{128}$/);
    expect(notModified(`"${first.etag}"`, first.etag)).toBe(true);
  });
});

describe('notModified', () => {
  const cases: [string, string | undefined, boolean][] = [
    ['absent', undefined, false],
    ['the tag', '"ABC"', true],
    ['unquoted is not a tag', 'ABC', false],
    ['another tag', '"DEF"', false],
    ['in a list', '"DEF", "ABC"', true],
    ['weak', 'W/"ABC"', true],
    ['any', '*', true],
  ];
  it.each(cases)('%s', (_name, header, want) => {
    expect(notModified(header, 'ABC')).toBe(want);
  });
});
