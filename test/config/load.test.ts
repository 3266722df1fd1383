import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { authenticationDocument } from '../../src/config/authentication.js';
import { V1, V1BETA1 } from '../../src/config/document.js';
import { loadDocumentFile, problemLine } from '../../src/config/load.js';
import { check, writeFile } from './support.js';
import { tempDir } from '../helpers/temp.js';

const yamlDoc = `# the authenticators of the test cluster
apiVersion: apiserver.config.orch.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: https://issuer.example.com
    audiences: [orchd]
  claimMappings:
    username:
      claim: sub
      prefix: ""
`;

describe('loading a configuration file', () => {
  it('reads YAML and JSON to the same internal form', () => {
    const fromYaml = check(authenticationDocument, yamlDoc);
    const fromJson = check(
      authenticationDocument,
      JSON.stringify(
        {
          apiVersion: V1,
          kind: 'AuthenticationConfiguration',
          jwt: [{ issuer: { url: 'https://issuer.example.com', audiences: ['orchd'] }, claimMappings: { username: { claim: 'sub', prefix: '' } } }],
        },
        null,
        2,
      ),
    );
    expect(fromYaml.result.ok).toBe(true);
    expect(fromJson.value).toEqual(fromYaml.value);
  });

  it('reads a file from disk and remembers where and in which version', () => {
    const file = writeFile(tempDir(), 'auth.yaml', yamlDoc.replace(V1, V1BETA1));
    const got = loadDocumentFile(file, authenticationDocument);
    expect(got.ok && { file: got.document.file, apiVersion: got.document.apiVersion }).toEqual({ file, apiVersion: V1BETA1 });
  });

  it('names a file it cannot read', () => {
    const file = join(tempDir(), 'missing.yaml');
    const got = loadDocumentFile(file, authenticationDocument);
    expect(!got.ok && got.problems.map(problemLine)).toEqual([`${file}: unable to read the file: no such file or directory`]);
  });

  const rows: { name: string; text: string; want: string[] }[] = [
    { name: 'YAML syntax error', text: 'apiVersion: [\n', want: ['Flow sequence in block collection must be sufficiently indented and end with a ]'] },
    { name: 'a key given twice', text: `${yamlDoc}kind: AuthenticationConfiguration\n`, want: ['Map keys must be unique'] },
    { name: 'an empty file', text: '# nothing\n', want: ['the file holds no document'] },
    { name: 'two documents', text: `${yamlDoc}---\n${yamlDoc}`, want: ['the file holds 2 documents; one is expected'] },
    { name: 'not an object', text: '[1, 2]', want: ['the document must be an object with apiVersion and kind'] },
    { name: 'apiVersion and kind missing', text: 'jwt: []', want: ['apiVersion: Required value', 'kind: Required value'] },
    {
      name: 'an unknown apiVersion',
      text: 'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n',
      want: ['apiVersion: Unsupported value: "apiserver.config.k8s.io/v1": supported values: "apiserver.config.orch.io/v1", "apiserver.orch.io/v1beta1"'],
    },
    {
      name: 'a kind for another flag',
      text: 'apiVersion: apiserver.config.orch.io/v1\nkind: AuthorizationConfiguration\n',
      want: ['kind: Unsupported value: "AuthorizationConfiguration": supported values: "AuthenticationConfiguration"'],
    },
    {
      name: 'a known kind in the wrong group',
      text: 'apiVersion: apiserver.orch.io/v1\nkind: AuthenticationConfiguration\n',
      want: ['apiVersion: Unsupported value: "apiserver.orch.io/v1": supported values: "apiserver.config.orch.io/v1", "apiserver.orch.io/v1beta1"'],
    },
    {
      name: 'wrong types stop the reading (as decoding does)',
      text: 'apiVersion: apiserver.config.orch.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: 5, audiences: orchd}\n  bogus: 1\n',
      want: [
        'jwt[0].issuer.url: Invalid value: "integer": must be of type string',
        'jwt[0].issuer.audiences: Invalid value: "string": must be of type array',
        'jwt[0].bogus: Forbidden: unknown field in apiserver.config.orch.io/v1 AuthenticationConfiguration',
      ],
    },
  ];
  it.each(rows)('refuses $name', ({ text, want }) => {
    const got = check(authenticationDocument, text);
    expect(got.result.ok).toBe(false);
    expect(got.messages.map((m) => m.split(' at line')[0])).toEqual(want);
  });

  it('reports every error of a file at once, unknown fields with the rule violations, in document order', () => {
    const text = `apiVersion: apiserver.orch.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: http://issuer.example.com
    audiences: [a, b]
    egressSelectorType: controlplane
  claimMappings:
    username: {claim: sub}
- issuer:
    url: http://issuer.example.com
    audiences: [a]
  claimMappings:
    username: {expression: claims.email}
    extra:
    - {key: tenant, valueExpression: claims.tid}
anonymous:
  enabled: false
  conditions: [{path: /livez}]
`;
    const got = check(authenticationDocument, text, '/etc/orchd/auth.yaml');
    expect(got.result.ok || got.result.problems.map(problemLine)).toEqual([
      '/etc/orchd/auth.yaml: jwt[0].issuer.egressSelectorType: Forbidden: unknown field in apiserver.orch.io/v1beta1 AuthenticationConfiguration',
      '/etc/orchd/auth.yaml: jwt[0].issuer.url: Invalid value: "http://issuer.example.com": URL scheme must be https',
      '/etc/orchd/auth.yaml: jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences',
      '/etc/orchd/auth.yaml: jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing',
      '/etc/orchd/auth.yaml: jwt[1].issuer.url: Invalid value: "http://issuer.example.com": URL scheme must be https',
      '/etc/orchd/auth.yaml: jwt[1].claimMappings.extra[0].key: Invalid value: "tenant": must be a domain-prefixed path (such as "acme.io/foo")',
      '/etc/orchd/auth.yaml: jwt[1].claimMappings.username.expression: Invalid value: "claims.email": claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression',
      '/etc/orchd/auth.yaml: jwt[1].issuer.url: Duplicate value: "http://issuer.example.com"',
      '/etc/orchd/auth.yaml: anonymous.conditions: Invalid value: [{"path":"/livez"}]: enabled should be set to true when conditions are defined',
    ]);
  });
});
