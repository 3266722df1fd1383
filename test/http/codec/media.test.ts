import { describe, expect, it } from 'vitest';
import { negotiateResponse, parseMediaRange } from '../../../src/http/codec/media.js';
import { ApiError } from '../../../src/http/respond/status.js';

describe('negotiateResponse', () => {
  const cases: [string, string | string[] | undefined, 'json' | 'yaml'][] = [
    ['no Accept header is JSON', undefined, 'json'],
    ['an empty Accept header is JSON', '  ', 'json'],
    ['*/* (client-node informers) is JSON', '*/*', 'json'],
    ['application/* is JSON', 'application/*', 'json'],
    ['application/json', 'application/json', 'json'],
    ['JSON with a q-value', 'application/json;q=0.9', 'json'],
    ['JSON with parameters', 'application/json; charset=utf-8', 'json'],
    ['application/yaml', 'application/yaml', 'yaml'],
    ['media types are case-insensitive', 'Application/YAML', 'yaml'],
    ['q-values are honoured over order', 'application/json;q=0.5, application/yaml', 'yaml'],
    ['the client order breaks q ties', 'application/yaml, application/json', 'yaml'],
    ['a specific type beats a wildcard of the same q', '*/*, application/yaml', 'yaml'],
    ['protobuf first falls back to JSON', 'application/vnd.kubernetes.protobuf, application/json', 'json'],
    ['protobuf then a wildcard is JSON', 'application/vnd.kubernetes.protobuf,*/*', 'json'],
    ['kubectl get asks for Tables, served as JSON', 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json', 'json'],
    ['a conversion orchd does not offer is passed over', 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io, application/yaml', 'yaml'],
    ['a Table version orchd does not offer is passed over', 'application/json;as=Table;v=v2;g=meta.k8s.io, application/yaml', 'yaml'],
    ['a browser', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'json'],
    ['client-node', 'application/json, */*;q=0.8', 'json'],
    ['a header given twice', ['application/vnd.kubernetes.protobuf', 'application/yaml'], 'yaml'],
    ['q=0 rules a type out', 'application/json;q=0, application/yaml;q=0.1', 'yaml'],
  ];
  it.each(cases)('%s', (_name, accept, want) => {
    expect(negotiateResponse(accept)).toBe(want);
  });

  const refused: [string, string][] = [
    ['protobuf alone', 'application/vnd.kubernetes.protobuf'],
    ['a type orchd does not serve', 'text/html'],
    ['only conversions orchd does not offer', 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io'],
    ['only a Table version orchd does not offer', 'application/json;as=Table;v=v2;g=meta.k8s.io'],
    ['only a Table of another group', 'application/json;as=Table;v=v1;g=meta.orch.io'],
    ['only a Table without a version', 'application/json;as=Table;g=meta.k8s.io'],
    ['only refused types', 'application/json;q=0'],
    ['a header that is no media range', 'json'],
  ];
  it.each(refused)('406 NotAcceptable for %s', (_name, accept) => {
    let err: unknown;
    try {
      negotiateResponse(accept);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toMatchObject({ code: 406, reason: 'NotAcceptable' });
    expect((err as ApiError).message).toContain(accept);
  });
});

describe('parseMediaRange', () => {
  it('splits types, parameters and q, in order of preference', () => {
    expect(parseMediaRange('application/yaml;q=0.5, application/json;as=Table;v=v1;g=meta.k8s.io')).toEqual([
      { type: 'application', subtype: 'json', params: { as: 'Table', v: 'v1', g: 'meta.k8s.io' }, q: 1 },
      { type: 'application', subtype: 'yaml', params: {}, q: 0.5 },
    ]);
  });
});
