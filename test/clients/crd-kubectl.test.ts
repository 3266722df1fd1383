/**
 * Every kubectl on this machine (the default one and kubectl.1.27 … kubectl.1.33) driving five
 * CustomResourceDefinitions of real-world shapes (fixtures/crds/: nested objects with status and
 * scale, lists of maps with keys, int-or-string, embedded resources, CEL rules with transitions)
 * against a real orchd: apply the CRDs, wait for Established, use the kinds with no restart (apply,
 * get with their columns, explain, scale, server-side apply merging a map list, field selectors,
 * the schema's and the rules' refusals), then delete a CRD and its objects with it.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { everyKubectl, kubectlHome, limiter, type Ran } from '../helpers/kubectl.js';
import { startServer } from '../helpers/server.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/crds/', import.meta.url));

/** At most two kubectl sequences at a time: two cores, and other suites run beside this one. */
const slot = limiter(2);

/** kubectl's column output as rows of cells, cut where the headings start (an empty cell stays one). */
function table(out: string): string[][] {
  const lines = out.replace(/\n$/, '').split('\n');
  const starts = [...lines[0]!.matchAll(/\S+/g)].map((m) => m.index!);
  return lines.map((l) => starts.map((at, i) => l.slice(at, starts[i + 1]).trim()));
}

const CRDS = ['webapps.apps.example.com', 'gateways.net.example.com', 'budgets.policy.example.com', 'blueprints.platform.example.com', 'certificates.security.example.com'];

describe('kubectl and CustomResourceDefinitions', () => {
  for (const { label, path } of everyKubectl()) {
    it.concurrent(`${label}: five CRDs applied and used at once, their refusals, a CRD deleted with its objects`, { timeout: 180_000 }, () =>
      slot(async () => {
        const server = await startServer();
        const home = await kubectlHome(server.url, { binary: path, cwd: FIXTURES });
        const ok = async (args: string[], stdin?: string): Promise<string> => {
          const r = await home.kubectl(args, stdin);
          expect(r, `kubectl ${args.join(' ')}`).toMatchObject({ code: 0 });
          return r.stdout;
        };
        const fails = async (args: string[], stdin: string): Promise<Ran> => {
          const r = await home.kubectl(args, stdin);
          expect(r.code, `kubectl ${args.join(' ')} should fail`).toBe(1);
          return r;
        };
        try {
          expect((await ok(['apply', '-f', 'crds.yaml'])).trim().split('\n')).toEqual(CRDS.map((n) => `customresourcedefinition.apiextensions.orch.io/${n} created`));
          await ok(['wait', '--for=condition=Established', '--timeout=20s', ...CRDS.map((n) => `crd/${n}`)]);
          // The kinds are served with no restart, through discovery kubectl has not seen before.
          expect((await ok(['apply', '-f', 'objects.yaml'])).trim().split('\n')).toEqual([
            'webapp.apps.example.com/shop created',
            'gateway.net.example.com/edge created',
            'budget.policy.example.com/shop created',
            'blueprint.platform.example.com/starter created',
            'certificate.security.example.com/shop-tls created',
          ]);

          // Columns: the CRD's additionalPrinterColumns (and -o wide's priority 1), Age from a date.
          const webapps = table(await ok(['get', 'wa', '-o', 'wide']));
          expect(webapps[0]).toEqual(['NAME', 'DESIRED', 'READY', 'IMAGE', 'AGE']);
          expect(webapps[1]).toEqual(['shop', '2', '', 'shop:1.0', expect.stringMatching(/^\d+s$/)]);
          expect(table(await ok(['get', 'gateways']))).toEqual([
            ['NAME', 'CLASS', 'LISTENERS'],
            ['edge', 'public', 'http'],
          ]);
          expect(table(await ok(['get', 'cert']))[1]).toEqual(['shop-tls', 'letsencrypt', '']);
          // Defaults applied, int-or-string kept as written, embedded resources kept whole, unknown fields in them too.
          const cert = parseYaml(await ok(['get', 'certificate', 'shop-tls', '-o', 'yaml']));
          expect(cert.spec).toMatchObject({ duration: '2160h', renewBefore: '360h' });
          const budget = parseYaml(await ok(['get', 'budget', 'shop', '-o', 'yaml']));
          expect(budget.spec.minAvailable).toBe('50%');
          const bp = parseYaml(await ok(['get', 'bp', 'starter', '-o', 'yaml']));
          expect(bp.spec.template).toEqual({
            apiVersion: 'apps.example.com/v1',
            kind: 'WebApp',
            metadata: { name: 'starter', labels: { tier: 'web' } },
            spec: { replicas: 1, anything: ['goes', 'here'] },
          });
          expect(bp.spec.resources[0].data).toEqual({ greeting: 'hello' });

          // explain reads the CRD's schema from OpenAPI.
          const explained = await ok(['explain', 'webapps.spec.replicas']);
          expect(explained).toContain('How many pods to run.');

          // scale through /scale; a field selector on a selectable field.
          expect(await ok(['scale', 'webapp/shop', '--replicas=5'])).toBe('webapp.apps.example.com/shop scaled\n');
          expect(parseYaml(await ok(['get', 'webapp', 'shop', '-o', 'yaml'])).spec.replicas).toBe(5);
          expect((await ok(['get', 'gateways', '--field-selector', 'spec.className=public', '-o', 'name'])).trim()).toBe('gateway.net.example.com/edge');
          expect((await ok(['get', 'gateways', '--field-selector', 'spec.className=private', '-o', 'name'])).trim()).toBe('');

          // Server-side apply by two managers: the map list merges by its key, each owning its own listeners.
          const gateway = (listeners: string) =>
            `apiVersion: net.example.com/v1\nkind: Gateway\nmetadata: { name: mesh, namespace: default }\nspec:\n  className: internal\n  listeners:\n${listeners}`;
          await ok(['apply', '--server-side', '-f', '-'], gateway('    - { name: http, port: 80, protocol: HTTP }\n    - { name: https, port: 443, protocol: HTTPS }\n'));
          await ok(['apply', '--server-side', '--field-manager=ops', '-f', '-'], gateway('    - { name: tcp, port: 9000, protocol: TCP }\n'));
          const mesh = parseYaml(await ok(['get', 'gateway', 'mesh', '-o', 'yaml', '--show-managed-fields']));
          expect(mesh.spec.listeners.map((l: { name: string }) => l.name)).toEqual(['http', 'https', 'tcp']);
          expect(mesh.metadata.managedFields.map((m: { manager: string; operation: string }) => [m.manager, m.operation])).toEqual([
            ['kubectl', 'Apply'],
            ['ops', 'Apply'],
          ]);

          // A strategic merge patch of a custom resource is refused, as kube-apiserver refuses it (its
          // schema names no merge keys, so the listeners would be replaced whole).
          const smp = await home.kubectl(['patch', 'gateway', 'edge', '--type=strategic', '-p', '{"spec":{"listeners":[{"name":"tcp","port":9000,"protocol":"TCP"}]}}']);
          expect(smp.code).toBe(1);
          expect(smp.stderr).toContain(
            'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
          );
          // Client-side apply of a changed object: OpenAPI offers the kind no strategic merge, so kubectl sends a JSON merge patch.
          const edge =
            'apiVersion: net.example.com/v1\nkind: Gateway\nmetadata: { name: edge, namespace: default }\nspec:\n  className: public\n  addresses: [10.0.0.1]\n  listeners:\n    - { name: http, port: 80, protocol: HTTP }\n    - { name: tcp, port: 9000, protocol: TCP }\n  routes:\n    - { path: /, backend: shop }\n';
          expect(await ok(['apply', '-f', '-'], edge)).toBe('gateway.net.example.com/edge configured\n');
          expect(parseYaml(await ok(['get', 'gateway', 'edge', '-o', 'yaml'])).spec.listeners.map((l: { name: string }) => l.name)).toEqual(['http', 'tcp']);

          // The schema's and the rules' refusals, with their fields.
          const badPort = await fails(
            ['apply', '-f', '-'],
            'apiVersion: net.example.com/v1\nkind: Gateway\nmetadata: { name: bad, namespace: default }\nspec:\n  className: x\n  listeners: [{ name: a, port: 70000, protocol: QUIC }]\n',
          );
          expect(badPort.stderr).toContain('spec.listeners[0].port: Invalid value: 70000: spec.listeners[0].port in body should be less than or equal to 65535');
          expect(badPort.stderr).toContain('spec.listeners[0].protocol: Unsupported value: "QUIC": supported values: "HTTP", "HTTPS", "TCP"');
          const both = await fails(
            ['apply', '-f', '-'],
            'apiVersion: policy.example.com/v1\nkind: Budget\nmetadata: { name: both, namespace: default }\nspec: { minAvailable: 1, maxUnavailable: 1 }\n',
          );
          expect(both.stderr).toContain('spec: Invalid value: minAvailable and maxUnavailable are mutually exclusive');
          const issuer = await fails(
            ['apply', '-f', '-'],
            'apiVersion: security.example.com/v1\nkind: Certificate\nmetadata: { name: shop-tls, namespace: default }\nspec: { issuer: other, dnsNames: [shop.example.com] }\n',
          );
          expect(issuer.stderr).toContain('spec: Invalid value: issuer is immutable');
          const names = await fails(
            ['apply', '-f', '-'],
            'apiVersion: security.example.com/v1\nkind: Certificate\nmetadata: { name: c2, namespace: default }\nspec: { issuer: a, dnsNames: [a.example.org], renewBefore: 9000h }\n',
          );
          expect(names.stderr).toContain('spec.dnsNames: Invalid value: every dnsName must end with .example.com: a.example.org');
          expect(names.stderr).toContain('spec.renewBefore: Invalid value: renewBefore (9000h) must be shorter than duration (2160h)');

          // The deprecated version is served, with its warning.
          const old = await home.kubectl(['get', 'certificates.v1beta1.security.example.com', 'shop-tls', '-o', 'name']);
          expect(old).toMatchObject({ code: 0, stdout: 'certificate.security.example.com/shop-tls\n' });
          expect(old.stderr).toContain('security.example.com/v1beta1 Certificate is deprecated; use v1');

          // Deleting a CRD deletes its objects, then it goes, and the kind is no longer served.
          await ok(['delete', 'crd', 'gateways.net.example.com', '--timeout=30s']);
          const gone = await home.kubectl(['get', 'gateways.net.example.com']);
          expect(gone.code).toBe(1);
          expect(gone.stderr).toMatch(/the server doesn't have a resource type "gateways"|no matches for kind|the server could not find the requested resource/);
          const { objects } = server.api.context;
          expect((await objects.everyObjectAt(objects.logReader().appliedSeq)).filter((s) => s.key.startsWith('net.example.com/gateways/'))).toEqual([]);
        } finally {
          await home.remove();
          await server.stop();
        }
      }),
    );
  }
});
