/**
 * Every kubectl on this machine (the default one, a dispatcher that picks a version from /version, and
 * kubectl.1.27 … kubectl.1.33 beside it) against a real orchd: the commands of issue 3 and what they
 * print. Each binary gets its own server, kubeconfig, discovery cache and HOME, so runs are independent
 * and nothing leaks into the user's ~/.kube.
 */
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { everyKubectl, kubectlHome, limiter, type Ran } from '../helpers/kubectl.js';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { sleep } from '../helpers/poll.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

/** At most two kubectl sequences at a time: two cores, and other suites run beside this one. */
const slot = limiter(2);

const kubectls = everyKubectl();

interface Sandbox {
  server: TestServer;
  home: string;
  /** The kubectl command line before the subcommand: server, kubeconfig, cache. */
  base: string[];
  env: NodeJS.ProcessEnv;
  kubectl(...args: string[]): Promise<Ran>;
  /** Runs kubectl, expects exit 0 and nothing on stderr, gives stdout. */
  ok(...args: string[]): Promise<string>;
}

/** A fresh server, and a kubectl with its own kubeconfig, discovery cache and HOME. */
async function sandbox(path: string): Promise<Sandbox> {
  const server = await startServer();
  const { home, base, env, kubectl: run } = await kubectlHome(server.url, { binary: path, cwd: FIXTURES });
  const kubectl = (...args: string[]): Promise<Ran> => run(args);
  const ok = async (...args: string[]): Promise<string> => {
    const r = await kubectl(...args);
    expect(r, `kubectl ${args.join(' ')}`).toMatchObject({ code: 0, stderr: '' });
    return r.stdout;
  };
  return { server, home, base, env, kubectl, ok };
}

/** Splits kubectl's column output into rows of cells (columns are separated by 3+ spaces or a tab). */
function table(out: string): string[][] {
  return out
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s{2,}|\t/));
}

describe('kubectl', () => {
  for (const { label, path } of kubectls) {
    it.concurrent(`${label}: create, get, replace, delete, events, api-resources, explain`, { timeout: 120_000 }, () =>
      slot(async () => {
        const { server, home, kubectl, ok } = await sandbox(path);
        try {
          // The dispatcher (default kubectl) runs the kubectl matching this answer's minor; 36 → its bundled 1.32.
          // stderr carries kubectl's version-skew warning (1.36 is ahead of every client here).
          const versionRun = await kubectl('version', '-o', 'json');
          expect(versionRun.code).toBe(0);
          const version = JSON.parse(versionRun.stdout);
          expect(version.serverVersion).toMatchObject({ major: '1', minor: '36', gitVersion: 'v1.36.0' });
          // The dispatcher's bundled 1.32.4 reports its minor as '32+'.
          expect(version.clientVersion.minor).toMatch(label.startsWith('kubectl.1.') ? new RegExp(`^${label.split('.')[2]}$`) : /^32\+?$/);

          // A server dry run answers as a create would and stores nothing: the real create below succeeds.
          expect(await ok('create', '-f', 'policy.yaml', '--dry-run=server')).toBe('validatingadmissionpolicy.admissionregistration.orch.io/demo created (server dry run)\n');
          expect(await ok('create', '-f', 'policy.yaml')).toBe('validatingadmissionpolicy.admissionregistration.orch.io/demo created\n');

          const again = await kubectl('create', '-f', 'policy.yaml');
          expect(again.code).toBe(1);
          expect(again.stderr).toContain('Error from server (AlreadyExists)');
          expect(again.stderr).toContain('validatingadmissionpolicies.admissionregistration.orch.io "demo" already exists');

          const invalid = await kubectl('create', '-f', 'invalid-policy.yaml');
          expect(invalid.code).toBe(1);
          expect(invalid.stderr).toContain('The ValidatingAdmissionPolicy "invalid" is invalid: spec.failurePolicy: Unsupported value: "Sometimes"');

          const list = parseYaml(await ok('get', 'validatingadmissionpolicies', '-o', 'yaml'));
          expect(list.kind).toBe('List');
          expect(list.items).toHaveLength(1);
          const vap = list.items[0];
          expect(vap).toMatchObject({
            apiVersion: 'admissionregistration.orch.io/v1',
            kind: 'ValidatingAdmissionPolicy',
            metadata: { name: 'demo', labels: { team: 'platform' }, generation: 1 },
            spec: {
              failurePolicy: 'Fail',
              matchConstraints: {
                matchPolicy: 'Equivalent', // defaulted by the server
                resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'], scope: '*' }],
              },
              validations: [{ expression: 'object.spec.replicas <= 5', message: 'at most 5 replicas' }],
            },
          });
          expect(vap.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
          expect(vap.metadata.resourceVersion).toMatch(/^\d+$/);
          expect(vap.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

          // The Table: NAME and the kind's own columns (Kubernetes prints VALIDATIONS and PARAMKIND).
          const rows = table(await ok('get', 'validatingadmissionpolicies'));
          expect(rows[0]).toEqual(['NAME', 'VALIDATIONS', 'PARAMKIND', 'AGE']);
          expect(rows.slice(1).map((r) => r.slice(0, 3))).toEqual([['demo', '1', '<unset>']]);
          expect(rows[1][3]).toMatch(/^\d+s$/);

          expect(await ok('replace', '-f', 'policy-replaced.yaml')).toBe('validatingadmissionpolicy.admissionregistration.orch.io/demo replaced\n');
          const replaced = JSON.parse(await ok('get', 'validatingadmissionpolicy', 'demo', '-o', 'json'));
          expect(replaced.metadata).toMatchObject({ uid: vap.metadata.uid, generation: 2 });
          expect(Number(replaced.metadata.resourceVersion)).toBeGreaterThan(Number(vap.metadata.resourceVersion));
          expect(replaced.spec).toMatchObject({ failurePolicy: 'Ignore', validations: [{ expression: 'object.spec.replicas <= 10' }] });

          expect(await ok('delete', 'validatingadmissionpolicy', 'demo')).toBe('validatingadmissionpolicy.admissionregistration.orch.io "demo" deleted\n');
          const gone = await kubectl('get', 'validatingadmissionpolicy', 'demo');
          expect(gone.code).toBe(1);
          expect(gone.stderr).toContain('Error from server (NotFound): validatingadmissionpolicies.admissionregistration.orch.io "demo" not found');

          expect(await ok('-n', 'default', 'create', '-f', 'event.yaml')).toBe('event.events.orch.io/demo-event created\n');
          const events = table(await ok('get', 'events.events.orch.io', '-n', 'default'));
          expect(events[0]).toEqual(['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
          expect(events.slice(1).map((r) => r.slice(1))).toEqual([['Normal', 'Started', 'validatingadmissionpolicy/demo', 'reconcile started']]);
          const all = table(await ok('get', 'events.v1.events.orch.io', '-A'));
          expect(all[0]).toEqual(['NAMESPACE', 'LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
          expect(all.slice(1).map((r) => [r[0], r[3]])).toEqual([['default', 'Started']]);
          const elsewhere = await kubectl('get', 'events.events.orch.io', '-n', 'kube-system');
          expect(elsewhere).toMatchObject({ code: 0, stdout: '' });
          expect(elsewhere.stderr).toContain('No resources found in kube-system namespace.');

          const resources = table(await ok('api-resources'));
          expect(resources[0]).toEqual(['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND']);
          const byName = new Map(resources.slice(1).map((r) => [r[0], r.slice(1)]));
          expect(byName.get('namespaces')).toEqual(['ns', 'v1', 'false', 'Namespace']);
          expect(byName.get('events')).toEqual(['ev', 'events.orch.io/v1', 'true', 'Event']);
          expect(byName.get('validatingadmissionpolicies')).toEqual(['admissionregistration.orch.io/v1', 'false', 'ValidatingAdmissionPolicy']);
          for (const kind of ['MutatingAdmissionPolicy', 'MutatingAdmissionPolicyBinding', 'MutatingWebhookConfiguration', 'ValidatingAdmissionPolicyBinding']) {
            expect(resources.some((r) => r.at(-1) === kind && r.includes('admissionregistration.orch.io/v1'))).toBe(true);
          }

          // explain reads OpenAPI: v2 (protobuf) first in 1.27/1.28, v3 only from 1.29 on.
          const explained = await ok('explain', 'validatingadmissionpolicy.spec');
          expect(explained).toMatch(/GROUP:\s+admissionregistration\.orch\.io/);
          expect(explained).toMatch(/KIND:\s+ValidatingAdmissionPolicy/);
          expect(explained).toMatch(/VERSION:\s+v1/);
          expect(explained).toContain('FIELD: spec <ValidatingAdmissionPolicySpec>');
          expect(explained).toMatch(/validations\t<\[\]Validation>/);
          expect(explained).toMatch(/failurePolicy\t<string>/);
          // kubectl prints a field's enum from 1.30 on (the default kubectl dispatches to 1.32).
          if (!/^kubectl\.1\.(27|28|29)$/.test(label)) expect(explained).toMatch(/failurePolicy\t<string>\n\s+enum: Fail, Ignore/);
          const event = await ok('explain', 'events', '--api-version=events.orch.io/v1');
          expect(event).toMatch(/GROUP:\s+events\.orch\.io/);
          expect(event).toMatch(/KIND:\s+Event/);
          expect(event).toMatch(/regarding\t<ObjectReference>/);
        } finally {
          await server.stop();
          await rm(home, { recursive: true, force: true });
        }
      }),
    );
  }

  // `get -w` and `--chunk-size` for the oldest and newest versioned kubectl: the watch asks for Tables
  // and prints each event's row; paging follows metadata.continue.
  const watchers = kubectls.filter((k) => k.label === 'kubectl.1.27' || k.label === kubectls.at(-1)!.label);
  for (const { label, path } of watchers) {
    it.concurrent(`${label}: get -w prints ADDED, MODIFIED, DELETED rows; --chunk-size pages`, { timeout: 120_000 }, () =>
      slot(async () => {
        const { server, home, base, env, ok } = await sandbox(path);
        const group = '/apis/admissionregistration.orch.io/v1/validatingadmissionpolicies';
        const body = (name: string) => ({
          apiVersion: 'admissionregistration.orch.io/v1',
          kind: 'ValidatingAdmissionPolicy',
          metadata: { name },
          spec: {
            matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }] },
            validations: [{ expression: 'true' }],
          },
        });
        const child = spawn(path, [...base, 'get', 'validatingadmissionpolicies', '-w', '--output-watch-events'], { cwd: FIXTURES, env, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        const waitFor = async (re: RegExp) => {
          const deadline = Date.now() + 20_000;
          while (!re.test(out)) {
            if (Date.now() > deadline || child.exitCode !== null) throw new Error(`kubectl -w printed ${JSON.stringify(out)}, stderr ${JSON.stringify(err)}; wanted ${re}`);
            await sleep(50);
          }
        };
        try {
          expect((await call(server.url, 'POST', group, body('watch-a'))).status).toBe(201);
          await waitFor(/^ADDED\s+watch-a\s+1\s+<unset>/m); // from the initial list, or the watch: either way a row
          const current = await call(server.url, 'GET', `${group}/watch-a`);
          const changed = { ...current.body, spec: { ...current.body.spec, validations: [{ expression: 'true' }, { expression: '1 < 2' }] } };
          expect((await call(server.url, 'PUT', `${group}/watch-a`, changed)).status).toBe(200);
          await waitFor(/^MODIFIED\s+watch-a\s+2\s+<unset>/m);
          expect((await call(server.url, 'DELETE', `${group}/watch-a`)).status).toBe(200);
          await waitFor(/^DELETED\s+watch-a\s+2\s+<unset>/m);
          expect(out.split('\n')[0].split(/\s{2,}/)).toEqual(['EVENT', 'NAME', 'VALIDATIONS', 'PARAMKIND', 'AGE']);
          expect(err).toBe('');
        } finally {
          if (child.exitCode === null) process.kill(child.pid!, 'SIGTERM');
          await exited;
        }
        try {
          for (const name of ['page-a', 'page-b', 'page-c']) expect((await call(server.url, 'POST', group, body(name))).status).toBe(201);
          const rows = table(await ok('get', 'validatingadmissionpolicies', '--chunk-size=1'));
          expect(rows.map((r) => r[0])).toEqual(['NAME', 'page-a', 'page-b', 'page-c']);
        } finally {
          await server.stop();
          await rm(home, { recursive: true, force: true });
        }
      }),
    );
  }

  // Selectors as kubectl sends them (-l, --field-selector), for the oldest and newest kubectl.
  for (const { label, path } of watchers) {
    it.concurrent(`${label}: get -l and --field-selector`, { timeout: 120_000 }, () =>
      slot(async () => {
        const { server, home, ok, kubectl } = await sandbox(path);
        const events = '/apis/events.orch.io/v1/namespaces/default/events';
        const event = (name: string, tier: string, type: string) => ({
          apiVersion: 'events.orch.io/v1',
          kind: 'Event',
          metadata: { name, labels: { tier } },
          eventTime: '2026-11-23T10:00:00.000000Z',
          reportingController: 'orch.io/test',
          reportingInstance: 'test-1',
          action: 'Create',
          reason: type === 'Warning' ? 'Failed' : 'Created',
          type,
          regarding: { kind: 'Pod', name: name, namespace: 'default' },
        });
        try {
          for (const [name, tier, type] of [
            ['ev-a', 'web', 'Normal'],
            ['ev-b', 'web', 'Warning'],
            ['ev-c', 'db', 'Warning'],
          ]) {
            expect((await call(server.url, 'POST', events, event(name, tier, type))).status).toBe(201);
          }
          const names = async (...args: string[]) => (await ok('get', 'events.events.orch.io', '-n', 'default', '-o', 'name', ...args)).trim().split('\n').sort();
          expect(await names('-l', 'tier=web')).toEqual(['event.events.orch.io/ev-a', 'event.events.orch.io/ev-b']);
          expect(await names('-l', 'tier in (db),tier!=web')).toEqual(['event.events.orch.io/ev-c']);
          expect(await names('--field-selector', 'type=Warning')).toEqual(['event.events.orch.io/ev-b', 'event.events.orch.io/ev-c']);
          expect(await names('--field-selector', 'type=Warning,metadata.name!=ev-b', '-l', 'tier')).toEqual(['event.events.orch.io/ev-c']);
          const bad = await kubectl('get', 'events.events.orch.io', '-n', 'default', '--field-selector', 'spec.nothing=x');
          expect(bad.code).toBe(1);
          expect(bad.stderr).toContain('field label not supported: spec.nothing');
        } finally {
          await server.stop();
          await rm(home, { recursive: true, force: true });
        }
      }),
    );
  }
});
