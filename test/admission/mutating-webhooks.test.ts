/**
 * Mutating webhooks on a real orchd calling a real HTTPS webhook (its own CA passed as caBundle):
 * patches that show on GET, denials, timeouts, failing and malformed answers under both failure
 * policies, matchConditions, selectors, rules, dry runs and sideEffects, reinvocation, DELETE and
 * warnings, all observed through HTTP answers, what the store then holds and what the webhook got.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startServer, type TestServer } from '../helpers/server.js';
import { fixtures } from '../resources/fixtures.js';
import { created as createdAt, namespaceMaker } from './support.js';
import { addLabel, WebhookServer } from './webhook-server.js';

const MWC = '/apis/admissionregistration.orch.io/v1/mutatingwebhookconfigurations';
const NS = '/api/v1/namespaces';
const events = (ns: string) => `/apis/events.orch.io/v1/namespaces/${ns}/events`;

let srv: TestServer;
let hook: WebhookServer;
let n = 0;
beforeAll(async () => {
  [srv, hook] = await Promise.all([startServer(), new WebhookServer().start()]);
  // The common answers; tests add their own paths.
  hook.on('/label', (r) => hook.allow(r, { patch: addLabel(r.request.object, 'mutated-by', 'webhook') }));
  hook.on('/allow', (r) => hook.allow(r));
  hook.on('/hang', () => 'hang');
  hook.on('/500', () => ({ status: 500, body: 'boom', contentType: 'text/plain' }));
  hook.on('/badjson', () => ({ status: 200, body: '{"apiVersion": "admission.orch.io/v1", ' }));
});
afterAll(async () => {
  await srv?.stop();
  await hook?.stop();
});

const eventRule = { apiGroups: ['events.orch.io'], apiVersions: ['v1'], resources: ['events'], operations: ['CREATE', 'UPDATE'] };

function webhook(name: string, path: string, over: Record<string, unknown> = {}): any {
  return { name, clientConfig: { url: hook.url + path, caBundle: hook.caBundle }, rules: [eventRule], sideEffects: 'None', admissionReviewVersions: ['v1'], ...over };
}
const created = (path: string, body: unknown): Promise<any> => createdAt(srv.url, path, body);
const namespace = namespaceMaker(() => srv.url, 'mwh');
function event(name: string, labels?: Record<string, string>): any {
  const e = fixtures.event();
  e.metadata = { name, ...(labels ? { labels } : {}) };
  return e;
}
/** Installs a configuration with these webhooks, runs fn, and removes it (so later tests start clean). */
async function withWebhooks(webhooks: unknown[], fn: () => Promise<void>): Promise<void> {
  const name = `cfg-${++n}`;
  await created(MWC, { apiVersion: 'admissionregistration.orch.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name }, webhooks });
  try {
    await fn();
  } finally {
    await call(srv.url, 'DELETE', `${MWC}/${name}`);
  }
}
const calls = (path: string) => hook.received.filter((r) => r.path === path).length;

describe('patching', () => {
  test('a JSONPatch from the webhook is applied: the label is stored and shows on GET', async () => {
    const ns = await namespace();
    await withWebhooks([webhook('label.example.com', '/label')], async () => {
      const before = calls('/label');
      const e = await created(events(ns), event('patched', { team: 'a' }));
      expect(e.metadata.labels).toEqual({ team: 'a', 'mutated-by': 'webhook' });
      expect(calls('/label')).toBe(before + 1);
      const got = await call(srv.url, 'GET', `${events(ns)}/patched`);
      expect(got.body.metadata.labels).toEqual({ team: 'a', 'mutated-by': 'webhook' });
      // an object without labels gets its first one
      expect((await created(events(ns), event('bare'))).metadata.labels).toEqual({ 'mutated-by': 'webhook' });
    });
  });

  test('the review is a v1 AdmissionReview with the request, the user, the object and the options', async () => {
    const ns = await namespace();
    await withWebhooks([webhook('label.example.com', '/label')], async () => {
      const e = await created(events(ns), event('reviewed'));
      const got = hook.received.filter((r) => r.path === '/label').at(-1)!;
      expect(got.query).toBe('timeout=10s');
      expect(got.headers['content-type']).toBe('application/json');
      const review = got.review;
      expect(review).toMatchObject({ apiVersion: 'admission.orch.io/v1', kind: 'AdmissionReview' });
      const req = review.request;
      expect(req.uid).toMatch(/^[0-9a-f-]{36}$/);
      expect(req).toMatchObject({
        kind: { group: 'events.orch.io', version: 'v1', kind: 'Event' },
        resource: { group: 'events.orch.io', version: 'v1', resource: 'events' },
        requestKind: { group: 'events.orch.io', version: 'v1', kind: 'Event' },
        requestResource: { group: 'events.orch.io', version: 'v1', resource: 'events' },
        name: 'reviewed',
        namespace: ns,
        operation: 'CREATE',
        oldObject: null,
        dryRun: false,
        options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
      });
      expect(typeof req.userInfo.username).toBe('string');
      expect(req.object).toMatchObject({ apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'reviewed', namespace: ns }, reason: 'Scheduled' });
      // an update sends the stored object as oldObject
      const u = await call(srv.url, 'PUT', `${events(ns)}/reviewed`, { ...e, metadata: { ...e.metadata, labels: { ...e.metadata.labels, phase: 'two' } } });
      expect(u.status, u.text).toBe(200);
      const upd = hook.reviews('/label').at(-1).request;
      expect(upd).toMatchObject({
        operation: 'UPDATE',
        options: { kind: 'UpdateOptions' },
        object: { metadata: { labels: { phase: 'two' } } },
        oldObject: { metadata: { labels: { 'mutated-by': 'webhook' }, resourceVersion: e.metadata.resourceVersion } },
      });
      expect(upd.oldObject.metadata.labels.phase).toBeUndefined();
    });
  });

  test('webhooks run in order (configurations by name), each one seeing the previous one’s patch', async () => {
    const ns = await namespace();
    hook.on('/first', (r) => hook.allow(r, { patch: addLabel(r.request.object, 'order', 'first') }));
    hook.on('/second', (r) => hook.allow(r, { patch: addLabel(r.request.object, 'seen', r.request.object.metadata.labels?.order ?? 'nothing') }));
    await withWebhooks([webhook('first.example.com', '/first'), webhook('second.example.com', '/second')], async () => {
      expect((await created(events(ns), event('ordered'))).metadata.labels).toEqual({ order: 'first', seen: 'first' });
    });
  });

  test('a v1beta1 webhook gets a v1beta1 review; its patch needs no patchType and its uid is not checked', async () => {
    const ns = await namespace();
    hook.on('/beta', (r) => ({
      review: {
        apiVersion: 'admission.orch.io/v1beta1',
        kind: 'AdmissionReview',
        response: { allowed: true, patch: Buffer.from(JSON.stringify(addLabel(r.request.object, 'beta', 'yes'))).toString('base64') },
      },
    }));
    await withWebhooks([webhook('beta.example.com', '/beta', { admissionReviewVersions: ['v1beta1'] })], async () => {
      expect((await created(events(ns), event('beta'))).metadata.labels).toEqual({ beta: 'yes' });
      expect(hook.reviews('/beta').at(-1).apiVersion).toBe('admission.orch.io/v1beta1');
    });
  });
});

describe('denial', () => {
  test('allowed: false refuses the write with the webhook’s status, whatever the failure policy', async () => {
    const ns = await namespace();
    hook.on('/deny', (r) => hook.deny(r, { code: 403, reason: 'Forbidden', message: 'events named like this are not welcome' }));
    for (const failurePolicy of ['Fail', 'Ignore']) {
      await withWebhooks([webhook('deny.example.com', '/deny', { failurePolicy })], async () => {
        const r = await call(srv.url, 'POST', events(ns), event(`denied-${failurePolicy.toLowerCase()}`));
        expect(r.status).toBe(403);
        expect(r.body).toMatchObject({
          kind: 'Status',
          status: 'Failure',
          reason: 'Forbidden',
          code: 403,
          message: 'admission webhook "deny.example.com" denied the request: events named like this are not welcome',
        });
        expect((await call(srv.url, 'GET', `${events(ns)}/denied-${failurePolicy.toLowerCase()}`)).status).toBe(404);
      });
    }
  });

  test('a denial without a status is a 400 "without explanation"', async () => {
    const ns = await namespace();
    hook.on('/deny-bare', (r) => ({ review: { apiVersion: 'admission.orch.io/v1', kind: 'AdmissionReview', response: { uid: r.request.uid, allowed: false } } }));
    await withWebhooks([webhook('bare.example.com', '/deny-bare')], async () => {
      const r = await call(srv.url, 'POST', events(ns), event('bare'));
      expect(r.status).toBe(400);
      expect(r.body.message).toBe('admission webhook "bare.example.com" denied the request without explanation');
    });
  });
});

describe('failurePolicy', () => {
  const port = () => new URL(hook.url).port;
  const rows: { name: string; path: string; over?: (h: any) => void; message: () => string }[] = [
    {
      name: 'a webhook that times out',
      path: '/hang',
      over: (h) => (h.timeoutSeconds = 1),
      message: () => `failed to call webhook: Post "https://127.0.0.1:${port()}/hang?timeout=1s": context deadline exceeded`,
    },
    { name: 'a 500 answer', path: '/500', message: () => 'failed to call webhook: an error on the server ("boom") has prevented the request from succeeding' },
    { name: 'an answer that is not JSON', path: '/badjson', message: () => expect.stringMatching(/^failed to call webhook: couldn't get version\/kind; json parse error: /) as any },
    { name: 'a path the webhook does not serve (404)', path: '/nowhere', message: () => 'failed to call webhook: the server could not find the requested resource' },
    {
      name: 'a server certificate the caBundle does not trust',
      path: '/label',
      over: (h) => (h.clientConfig.caBundle = Buffer.from(new WebhookServer().pki.caPem).toString('base64')),
      message: () => expect.stringMatching(new RegExp(`^failed to call webhook: Post "https://127.0.0.1:${port()}/label\\?timeout=10s": .*certificate`)) as any,
    },
    {
      name: 'no server at the URL',
      path: '/label',
      over: (h) => (h.clientConfig.url = 'https://127.0.0.1:1/label'),
      message: () => expect.stringMatching(/^failed to call webhook: Post "https:\/\/127.0.0.1:1\/label\?timeout=10s": connect ECONNREFUSED/) as any,
    },
    {
      name: 'a Service (orchd serves none)',
      path: '',
      over: (h) => (h.clientConfig = { service: { name: 'hooks', namespace: 'tools', path: '/mutate' } }),
      message: () => expect.stringMatching(/^failed to call webhook: Post "https:\/\/hooks.tools.svc:443\/mutate\?timeout=10s": service "hooks" not found/) as any,
    },
    { name: 'an answer with another uid', path: '/wrong-uid', message: () => 'received invalid webhook response: expected response.uid="UID", got "someone-else"' },
    { name: 'an answer without response', path: '/no-response', message: () => 'received invalid webhook response: webhook response was absent' },
    {
      name: 'a v1beta1 answer to a v1 review',
      path: '/beta-answer',
      message: () => 'received invalid webhook response: expected webhook response of admission.orch.io/v1, Kind=AdmissionReview, got admission.orch.io/v1beta1, Kind=AdmissionReview',
    },
    { name: 'a patch without patchType', path: '/no-patch-type', message: () => 'received invalid webhook response: webhook returned response.patch but not response.patchType' },
    { name: 'a patch that is not a list', path: '/patch-object', message: () => 'received undecodable patch in webhook response: json: cannot unmarshal object into Go value of type jsonpatch.Patch' },
    { name: 'a patch type orchd does not know', path: '/patch-type', message: () => 'unsupported patch type "MergePatch"' },
  ];
  beforeAll(() => {
    const v1 = (response: Record<string, unknown>) => ({ review: { apiVersion: 'admission.orch.io/v1', kind: 'AdmissionReview', response } });
    const patch = (p: unknown) => Buffer.from(JSON.stringify(p)).toString('base64');
    hook.on('/wrong-uid', () => v1({ uid: 'someone-else', allowed: true }));
    hook.on('/no-response', () => ({ review: { apiVersion: 'admission.orch.io/v1', kind: 'AdmissionReview' } }));
    hook.on('/beta-answer', (r) => ({ review: { apiVersion: 'admission.orch.io/v1beta1', kind: 'AdmissionReview', response: { uid: r.request.uid, allowed: true } } }));
    hook.on('/no-patch-type', (r) => v1({ uid: r.request.uid, allowed: true, patch: patch([{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }]) }));
    hook.on('/patch-object', (r) => v1({ uid: r.request.uid, allowed: true, patchType: 'JSONPatch', patch: patch({ op: 'add' }) }));
    hook.on('/patch-type', (r) => v1({ uid: r.request.uid, allowed: true, patchType: 'MergePatch', patch: patch([{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }]) }));
  });

  test.each(rows)('Fail refuses the write on $name (500, the webhook named); Ignore lets it through unpatched', async ({ path, over, message }) => {
    const ns = await namespace();
    for (const failurePolicy of ['Fail', 'Ignore']) {
      const h = webhook('flaky.example.com', path, { failurePolicy });
      over?.(h);
      await withWebhooks([h], async () => {
        const name = `e-${failurePolicy.toLowerCase()}`;
        const started = Date.now();
        const r = await call(srv.url, 'POST', events(ns), event(name));
        if (failurePolicy === 'Ignore') {
          expect(r.status, r.text).toBe(201);
          expect(r.body.metadata.labels).toBeUndefined();
          return;
        }
        expect(r.status, r.text).toBe(500);
        const uid = hook.received.at(-1)?.review?.request?.uid;
        const want = message();
        const reason = typeof want === 'string' ? want.replace('"UID"', JSON.stringify(uid)) : want;
        expect(r.body).toMatchObject({ kind: 'Status', reason: 'InternalError', code: 500 });
        const prefix = 'Internal error occurred: failed calling webhook "flaky.example.com": ';
        expect(r.body.message.startsWith(prefix), r.body.message).toBe(true);
        expect(r.body.message.slice(prefix.length)).toEqual(reason);
        expect((await call(srv.url, 'GET', `${events(ns)}/${name}`)).status).toBe(404);
        if (path === '/hang') expect(Date.now() - started).toBeLessThan(9_000);
      });
    }
  });
});

describe('a stored configuration the API would refuse now', () => {
  test('a URL that cannot be parsed is a call failure: Fail refuses the write, Ignore lets it through', async () => {
    const ns = await namespace();
    for (const failurePolicy of ['Fail', 'Ignore']) {
      const name = `bad-url-${failurePolicy.toLowerCase()}`;
      await created(MWC, {
        apiVersion: 'admissionregistration.orch.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name },
        webhooks: [webhook('url.example.com', '/label', { failurePolicy })],
      });
      try {
        // Put in the store as an older release could have left it: the API validates URLs on write.
        const { objects } = srv.api.context;
        const kind = srv.api.context.kinds.find((k) => k.kind === 'MutatingWebhookConfiguration')!;
        const bad = webhook('url.example.com', '/label', { failurePolicy, clientConfig: { url: 'https://[::1/label', caBundle: hook.caBundle } });
        await srv.store.update(objects.key(kind, undefined, name), (cur) => ({ kind: 'put', obj: { ...cur!.obj, webhooks: [bad] } }));
        const r = await call(srv.url, 'POST', events(ns), event(name));
        if (failurePolicy === 'Ignore') {
          expect(r.status, r.text).toBe(201);
          continue;
        }
        expect(r.status).toBe(500);
        expect(r.body.message).toMatch(/^Internal error occurred: failed calling webhook "url.example.com": Unparsable URL: /);
      } finally {
        await call(srv.url, 'DELETE', `${MWC}/${name}`);
      }
    }
  });
});

describe('which webhooks are called', () => {
  test('matchConditions: false skips the webhook; an error fails the request under Fail and skips it under Ignore', async () => {
    const ns = await namespace();
    const conditions = [{ name: 'has-team', expression: "has(object.metadata.labels) && 'team' in object.metadata.labels" }];
    await withWebhooks([webhook('cond.example.com', '/label', { matchConditions: conditions })], async () => {
      expect((await created(events(ns), event('no-team'))).metadata.labels).toBeUndefined();
      expect((await created(events(ns), event('team', { team: 'a' }))).metadata.labels).toEqual({ team: 'a', 'mutated-by': 'webhook' });
    });
    const erroring = [{ name: 'lookup', expression: "object.metadata.labels['team'] == 'a'" }];
    await withWebhooks([webhook('cond.example.com', '/label', { matchConditions: erroring })], async () => {
      const r = await call(srv.url, 'POST', events(ns), event('no-labels'));
      expect(r.status).toBe(403);
      expect(r.body.reason).toBe('Forbidden');
      expect(r.body.message).toMatch(/^events\.events\.orch\.io "no-labels" is forbidden: expression 'object\.metadata\.labels\['team'\] == 'a'' resulted in error: /);
    });
    await withWebhooks([webhook('cond.example.com', '/label', { matchConditions: erroring, failurePolicy: 'Ignore' })], async () => {
      const before = calls('/label');
      expect((await created(events(ns), event('no-labels'))).metadata.labels).toBeUndefined();
      expect(calls('/label')).toBe(before);
    });
  });

  test('namespaceSelector and objectSelector', async () => {
    const prod = await namespace({ env: 'prod' });
    const dev = await namespace({ env: 'dev' });
    await withWebhooks([webhook('ns.example.com', '/label', { namespaceSelector: { matchLabels: { env: 'prod' } } })], async () => {
      expect((await created(events(prod), event('in-prod'))).metadata.labels).toEqual({ 'mutated-by': 'webhook' });
      expect((await created(events(dev), event('in-dev'))).metadata.labels).toBeUndefined();
    });
    await withWebhooks([webhook('obj.example.com', '/label', { objectSelector: { matchExpressions: [{ key: 'inject', operator: 'In', values: ['yes'] }] } })], async () => {
      expect((await created(events(dev), event('wanted', { inject: 'yes' }))).metadata.labels).toEqual({ inject: 'yes', 'mutated-by': 'webhook' });
      expect((await created(events(dev), event('unwanted', { inject: 'no' }))).metadata.labels).toEqual({ inject: 'no' });
    });
  });

  test('rules: operations, groups, versions, resources and scope; matchPolicy with no equivalent version', async () => {
    const ns = await namespace();
    const cases: { rule: Record<string, unknown>; matchPolicy?: string; labelled: boolean }[] = [
      { rule: eventRule, labelled: true },
      { rule: { ...eventRule, operations: ['UPDATE'] }, labelled: false },
      { rule: { ...eventRule, operations: ['*'] }, labelled: true },
      { rule: { ...eventRule, apiGroups: [''] }, labelled: false },
      { rule: { ...eventRule, apiGroups: ['*'], resources: ['*'] }, labelled: true },
      { rule: { ...eventRule, resources: ['events/status'] }, labelled: false },
      { rule: { ...eventRule, resources: ['events/*'] }, labelled: true },
      { rule: { ...eventRule, scope: 'Cluster' }, labelled: false },
      { rule: { ...eventRule, scope: 'Namespaced' }, labelled: true },
      // Event is served in v1 only: no other version to match, under either policy
      { rule: { ...eventRule, apiVersions: ['v1beta1'] }, matchPolicy: 'Exact', labelled: false },
      { rule: { ...eventRule, apiVersions: ['v1beta1'] }, matchPolicy: 'Equivalent', labelled: false },
    ];
    for (const [i, c] of cases.entries()) {
      await withWebhooks([webhook('rules.example.com', '/label', { rules: [c.rule], ...(c.matchPolicy ? { matchPolicy: c.matchPolicy } : {}) })], async () => {
        const e = await created(events(ns), event(`rule-${i}`));
        expect(e.metadata.labels?.['mutated-by'], JSON.stringify(c)).toBe(c.labelled ? 'webhook' : undefined);
      });
    }
    // cluster-scoped objects: namespaces
    await withWebhooks(
      [webhook('ns-rule.example.com', '/label', { rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], operations: ['CREATE'], scope: 'Cluster' }] })],
      async () => {
        expect((await created(NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `mwh-ns-${++n}` } })).metadata.labels).toMatchObject({ 'mutated-by': 'webhook' });
      },
    );
  });

  test('webhooks are never called for the admissionregistration kinds themselves', async () => {
    const everything = { apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], operations: ['*'] };
    await withWebhooks([webhook('all.example.com', '/label', { rules: [everything] })], async () => {
      const before = calls('/label');
      const name = `other-${++n}`;
      await created(MWC, { apiVersion: 'admissionregistration.orch.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name }, webhooks: [webhook('x.example.com', '/allow', { rules: [] })] });
      expect((await call(srv.url, 'DELETE', `${MWC}/${name}`)).status).toBe(200);
      expect(calls('/label')).toBe(before);
    });
  });
});

describe('dry run', () => {
  test('a NoneOnDryRun webhook is called with dryRun: its patch shows in the answer, nothing is stored', async () => {
    const ns = await namespace();
    await withWebhooks([webhook('dry.example.com', '/label', { sideEffects: 'NoneOnDryRun' })], async () => {
      const r = await call(srv.url, 'POST', `${events(ns)}?dryRun=All`, event('dry'));
      expect(r.status, r.text).toBe(201);
      expect(r.body.metadata.labels).toEqual({ 'mutated-by': 'webhook' });
      expect(hook.reviews('/label').at(-1).request).toMatchObject({ dryRun: true, options: { kind: 'CreateOptions', dryRun: ['All'] } });
      expect((await call(srv.url, 'GET', `${events(ns)}/dry`)).status).toBe(404);
    });
  });

  test('a webhook with side effects refuses a dry run (400) without being called, and is called on a real write', async () => {
    const ns = await namespace();
    const name = `side-effects-${++n}`;
    await created(MWC, { apiVersion: 'admissionregistration.orch.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name }, webhooks: [webhook('side.example.com', '/label')] });
    try {
      // The v1 API refuses sideEffects Some on create, as Kubernetes' does; a configuration stored
      // under looser rules (Kubernetes' v1beta1) keeps it. Such an object is put in the store here.
      const objects = srv.api.context.objects;
      const kind = srv.api.context.kinds.find((k) => k.kind === 'MutatingWebhookConfiguration')!;
      await srv.store.update(objects.key(kind, undefined, name), (cur) => ({ kind: 'put', obj: { ...cur!.obj, webhooks: [webhook('side.example.com', '/label', { sideEffects: 'Some' })] } }));
      const before = calls('/label');
      const r = await call(srv.url, 'POST', `${events(ns)}?dryRun=All`, event('dry'));
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ reason: 'BadRequest', message: 'admission webhook "side.example.com" does not support dry run' });
      expect(calls('/label')).toBe(before);
      expect((await created(events(ns), event('real'))).metadata.labels).toEqual({ 'mutated-by': 'webhook' });
    } finally {
      await call(srv.url, 'DELETE', `${MWC}/${name}`);
    }
  });
});

describe('reinvocation', () => {
  beforeAll(() => {
    // Adds its label once; a second call sees it and patches nothing.
    hook.on('/once-a', (r) => (r.request.object.metadata.labels?.a ? hook.allow(r) : hook.allow(r, { patch: addLabel(r.request.object, 'a', 'x') })));
    hook.on('/once-b', (r) => (r.request.object.metadata.labels?.b ? hook.allow(r) : hook.allow(r, { patch: addLabel(r.request.object, 'b', 'x') })));
  });

  test('IfNeeded: a webhook runs again when a later webhook changed the object; Never: it does not', async () => {
    const ns = await namespace();
    for (const [policy, want] of [
      ['IfNeeded', 2],
      ['Never', 1],
    ] as const) {
      await withWebhooks([webhook('a.example.com', '/once-a', { reinvocationPolicy: policy }), webhook('b.example.com', '/once-b')], async () => {
        const [a, b] = [calls('/once-a'), calls('/once-b')];
        expect((await created(events(ns), event(`re-${policy.toLowerCase()}`))).metadata.labels).toEqual({ a: 'x', b: 'x' });
        expect(calls('/once-a') - a).toBe(want);
        expect(calls('/once-b') - b).toBe(1);
        // the reinvocation sees the later webhook's change
        if (policy === 'IfNeeded') expect(hook.reviews('/once-a').at(-1).request.object.metadata.labels).toEqual({ a: 'x', b: 'x' });
      });
    }
  });

  test('IfNeeded: no second call when nothing changed after the webhook (its own patch does not count)', async () => {
    const ns = await namespace();
    await withWebhooks([webhook('b.example.com', '/allow'), webhook('a.example.com', '/once-a', { reinvocationPolicy: 'IfNeeded' })], async () => {
      const a = calls('/once-a');
      expect((await created(events(ns), event('re-last'))).metadata.labels).toEqual({ a: 'x' });
      expect(calls('/once-a') - a).toBe(1);
    });
  });
});

describe('DELETE', () => {
  test('a webhook matching DELETE gets the stored object as oldObject and can refuse the delete', async () => {
    const ns = await namespace();
    await created(events(ns), event('keep'));
    hook.on('/no-delete', (r) => hook.deny(r, { code: 403, reason: 'Forbidden', message: 'this one stays' }));
    await withWebhooks([webhook('nodelete.example.com', '/no-delete', { rules: [{ ...eventRule, operations: ['DELETE'] }] })], async () => {
      const r = await call(srv.url, 'DELETE', `${events(ns)}/keep`);
      expect(r.status).toBe(403);
      expect(r.body.message).toBe('admission webhook "nodelete.example.com" denied the request: this one stays');
      const review = hook.reviews('/no-delete').at(-1).request;
      expect(review).toMatchObject({ operation: 'DELETE', name: 'keep', namespace: ns, object: null, oldObject: { metadata: { name: 'keep' } }, options: { kind: 'DeleteOptions' } });
      expect((await call(srv.url, 'GET', `${events(ns)}/keep`)).status).toBe(200);
    });
    expect((await call(srv.url, 'DELETE', `${events(ns)}/keep`)).status).toBe(200);
  });

  test('a webhook cannot patch a DELETE: the request fails whatever the failure policy', async () => {
    const ns = await namespace();
    await created(events(ns), event('patched-delete'));
    hook.on('/patch-delete', (r) => hook.allow(r, { patch: [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }] }));
    await withWebhooks([webhook('pd.example.com', '/patch-delete', { failurePolicy: 'Ignore', rules: [{ ...eventRule, operations: ['DELETE'] }] })], async () => {
      const r = await call(srv.url, 'DELETE', `${events(ns)}/patched-delete`);
      expect(r.status).toBe(500);
      expect(r.body.message).toBe('Internal error occurred: admission webhook "pd.example.com" attempted to modify the object, which is not supported for this operation');
    });
  });
});

describe('warnings', () => {
  test('a webhook’s warnings become Warning headers, on success and on denial', async () => {
    const ns = await namespace();
    hook.on('/warn', (r) => hook.allow(r, { warnings: ['deprecated field used', 'second warning'] }));
    hook.on('/warn-deny', (r) => hook.deny(r, { code: 422, message: 'no' }, ['denied with a warning']));
    await withWebhooks([webhook('warn.example.com', '/warn')], async () => {
      const r = await call(srv.url, 'POST', events(ns), event('warned'));
      expect(r.status).toBe(201);
      expect(r.headers.get('warning')).toBe('299 - "deprecated field used", 299 - "second warning"');
    });
    await withWebhooks([webhook('warn.example.com', '/warn-deny')], async () => {
      const r = await call(srv.url, 'POST', events(ns), event('warned-denied'));
      expect(r.status).toBe(422);
      expect(r.headers.get('warning')).toBe('299 - "denied with a warning"');
    });
  });
});
