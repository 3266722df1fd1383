/**
 * orchd started with a TracingConfiguration file exports its spans over OTLP gRPC to a real
 * collector stand-in on 127.0.0.1: one server span per request with the admission phases, the log
 * append and the response write as its children; a client's traceparent is honoured; the sampling
 * rate decides for requests that come without one.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadServerConfig } from '../../src/config/server-config.js';
import { type Running } from '../../src/serve.js';
import { tracer } from '../../src/observability/spans.js';
import { call, startServer } from '../helpers/server.js';
import { OtlpCollector, type CollectedSpan } from './otlp-collector.js';
import { addLabel, WebhookServer } from '../admission/webhook-server.js';
import { SarWebhook, webhookEntry } from '../auth/sar-webhook.js';
import { freePort } from '../helpers/free-port.js';
import { tempDir } from '../helpers/temp.js';

const collector = new OtlpCollector();
let dir: string;
let n = 0;

beforeAll(async () => {
  await collector.start();
  dir = tempDir('orchd-tracing-');
});
afterAll(async () => {
  await collector.stop();
});
beforeEach(() => {
  collector.spans.length = 0;
});

/** A server whose config has a tracing file with these members (none: no tracing file at all). */
async function start(tracing: Record<string, unknown> | undefined, authorizers?: unknown[]): Promise<Running> {
  n++;
  const file = join(dir, `tracing-${n}.yaml`);
  if (tracing) await writeFile(file, stringify({ apiVersion: 'apiserver.config.orch.io/v1', kind: 'TracingConfiguration', ...tracing }));
  const authzFile = join(dir, `authz-${n}.yaml`);
  if (authorizers) await writeFile(authzFile, stringify({ apiVersion: 'apiserver.config.orch.io/v1', kind: 'AuthorizationConfiguration', authorizers }));
  const loaded = loadServerConfig({ ...(tracing ? { tracing: file } : {}), ...(authorizers ? { authorization: authzFile } : {}) });
  if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join('\n'));
  return startServer({ dataDir: join(dir, `data-${n}`), config: loaded.config, policyStatus: true });
}

const createNamespace = (base: string, name: string, headers: Record<string, string> = {}) =>
  call(base, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, { 'user-agent': 'tracing-test/1.0', ...headers });

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const inTrace = (traceId: string) => collector.spans.filter((s) => s.traceId === traceId);
const serverSpanOf = (path: string, method: string): CollectedSpan | undefined =>
  collector.spans.find((s) => s.kind === 2 && s.attributes['url.path'] === path && s.attributes['http.request.method'] === method);

describe('tracing', () => {
  it('a write is one server span whose children are admission, log append and response write, in that order', async () => {
    const server = await start({ endpoint: collector.endpoint, samplingRatePerMillion: 1_000_000 });
    expect((await createNamespace(server.url, 'traced')).status).toBe(201);
    await server.close();

    const root = serverSpanOf('/api/v1/namespaces', 'POST');
    expect(root).toMatchObject({
      name: 'POST',
      parentSpanId: '',
      service: 'orchd',
      statusCode: 0,
      attributes: { 'http.request.method': 'POST', 'url.path': '/api/v1/namespaces', 'http.response.status_code': 201, 'user_agent.original': 'tracing-test/1.0' },
    });
    const children = inTrace(root!.traceId).filter((s) => s !== root);
    const byName = Object.fromEntries(children.map((s) => [s.name, s]));
    expect(Object.keys(byName).sort()).toEqual(['admission.mutate', 'admission.validate', 'log.append', 'response.write']);
    for (const c of children) expect(c.parentSpanId).toBe(root!.spanId);
    expect(byName['admission.mutate']!.attributes).toMatchObject({ 'admission.operation': 'CREATE', 'k8s.resource': 'namespaces', 'k8s.object.name': 'traced' });
    expect(byName['log.append']!.attributes).toMatchObject({ 'orchd.log.key': expect.stringContaining('traced'), 'orchd.log.record': 'put', 'orchd.log.seq': expect.any(Number) });
    expect(byName['response.write']!.attributes).toMatchObject({ 'http.response.status_code': 201 });
    const order = ['admission.mutate', 'admission.validate', 'log.append', 'response.write'].map((name) => byName[name]!);
    // The SDK dates a span's start with Date.now() (whole milliseconds) and measures its length with
    // the monotonic clock, so comparisons across spans hold to within a millisecond, plus what the two
    // clocks drift apart during the request: a clean-clone run on a busy machine saw a child end 2.02 ms
    // after its root. Three milliseconds still catch a span that is not nested (a write takes several).
    const ms = 3_000_000n;
    for (let i = 1; i < order.length; i++) expect(order[i]!.startNanos + ms).toBeGreaterThanOrEqual(order[i - 1]!.endNanos);
    for (const c of children) {
      expect(c.startNanos + ms).toBeGreaterThanOrEqual(root!.startNanos);
      expect(c.endNanos).toBeLessThanOrEqual(root!.endNanos + ms);
    }
  });

  it('webhook calls are client spans of the request, and the webhooks receive its trace context', async () => {
    const [sar, hook] = await Promise.all([new SarWebhook().start(), new WebhookServer().start()]);
    hook.on('/label', (r) => hook.allow(r, { patch: addLabel(r.request.object, 'traced', 'yes') }));
    try {
      // The authorizer webhook has no opinion on anonymous requests; AlwaysAllow then allows.
      const server = await start({ endpoint: collector.endpoint, samplingRatePerMillion: 1_000_000 }, [webhookEntry('sar', await sar.kubeconfig(dir)), { type: 'AlwaysAllow', name: 'everyone' }]);
      const webhook = {
        name: 'label.example.com',
        clientConfig: { url: `${hook.url}/label`, caBundle: hook.caBundle },
        rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], operations: ['CREATE'] }],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      };
      const mwc = { apiVersion: 'admissionregistration.orch.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'traced' }, webhooks: [webhook] };
      expect((await call(server.url, 'POST', '/apis/admissionregistration.orch.io/v1/mutatingwebhookconfigurations', mwc)).status).toBe(201);
      expect((await createNamespace(server.url, 'through-webhooks')).status).toBe(201);
      await server.close();

      const root = serverSpanOf('/api/v1/namespaces', 'POST')!;
      const spans = inTrace(root.traceId);
      const named = (name: string) => spans.find((s) => s.name === name);
      const authz = named('authorization.webhook');
      const admission = named('admission.webhook');
      expect(authz).toMatchObject({ kind: 3, parentSpanId: root.spanId });
      expect(admission).toMatchObject({ kind: 3, parentSpanId: named('admission.mutate')!.spanId });
      // Each webhook got the trace context of its own client span.
      expect(sar.traceparents).toContain(`00-${root.traceId}-${authz!.spanId}-01`);
      expect(hook.received.at(-1)!.headers.traceparent).toBe(`00-${root.traceId}-${admission!.spanId}-01`);
    } finally {
      await Promise.all([sar.stop(), hook.stop()]);
    }
  });

  it('a client error is traced with its status code and does not fail the span', async () => {
    const server = await start({ endpoint: collector.endpoint, samplingRatePerMillion: 1_000_000 });
    expect((await call(server.url, 'GET', '/api/v1/namespaces/nowhere')).status).toBe(404);
    await server.close();
    expect(serverSpanOf('/api/v1/namespaces/nowhere', 'GET')).toMatchObject({ name: 'GET', statusCode: 0, attributes: { 'http.response.status_code': 404 } });
  });

  it("honours the client's traceparent: a sampled parent is followed even at sampling rate 0, an unsampled one is not", async () => {
    const server = await start({ endpoint: collector.endpoint, samplingRatePerMillion: 0 });
    const sampled = { traceId: hex(16), spanId: hex(8) };
    const unsampled = { traceId: hex(16), spanId: hex(8) };
    expect((await createNamespace(server.url, 'with-parent', { traceparent: `00-${sampled.traceId}-${sampled.spanId}-01` })).status).toBe(201);
    expect((await createNamespace(server.url, 'unsampled-parent', { traceparent: `00-${unsampled.traceId}-${unsampled.spanId}-00` })).status).toBe(201);
    expect((await createNamespace(server.url, 'no-parent')).status).toBe(201);
    await server.close();

    const root = inTrace(sampled.traceId).find((s) => s.kind === 2);
    expect(root).toMatchObject({ name: 'POST', parentSpanId: sampled.spanId });
    expect(
      inTrace(sampled.traceId)
        .map((s) => s.name)
        .sort(),
    ).toEqual(['POST', 'admission.mutate', 'admission.validate', 'log.append', 'response.write']);
    // Rate 0 samples no root, and the unsampled parent's decision is kept: nothing else was sent.
    expect(collector.spans.filter((s) => s.traceId !== sampled.traceId)).toEqual([]);
  });

  it('a collector that is down loses the spans, not the shutdown: close() resolves', async () => {
    const down = await freePort();
    const server = await start({ endpoint: `127.0.0.1:${down}`, samplingRatePerMillion: 1_000_000 });
    expect((await createNamespace(server.url, 'collector-down')).status).toBe(201);
    await expect(server.close()).resolves.toBeUndefined();
  });

  it('without a sampling rate, requests without a traceparent are not sampled', async () => {
    const server = await start({ endpoint: collector.endpoint });
    expect((await createNamespace(server.url, 'unset-rate')).status).toBe(201);
    await server.close();
    expect(collector.spans).toEqual([]);
  });

  it('without a tracing configuration nothing is registered; closing a traced server unregisters it', async () => {
    const traced = await start({ endpoint: collector.endpoint, samplingRatePerMillion: 1_000_000 });
    expect(tracer().startSpan('probe').isRecording()).toBe(true);
    await traced.close();
    expect(tracer().startSpan('probe').isRecording()).toBe(false);
    const plain = await start(undefined);
    expect((await createNamespace(plain.url, 'untraced')).status).toBe(201);
    expect(tracer().startSpan('probe').isRecording()).toBe(false);
    await plain.close();
    expect(collector.spans.filter((s) => s.name === 'probe' || s.attributes['k8s.object.name'] === 'untraced')).toEqual([]);
  });

  it('exports to a collector on a unix socket (endpoint unix:///path)', async () => {
    const onSocket = await new OtlpCollector().start(`unix://${join(dir, 'otel.sock')}`);
    try {
      const server = await start({ endpoint: onSocket.endpoint, samplingRatePerMillion: 1_000_000 });
      expect((await createNamespace(server.url, 'over-uds')).status).toBe(201);
      await server.close();
      expect(onSocket.spans.find((s) => s.name === 'admission.mutate' && s.attributes['k8s.object.name'] === 'over-uds')).toBeDefined();
    } finally {
      await onSocket.stop();
    }
  });

  it('a second traced server in the same process is refused at start; the first keeps tracing', async () => {
    const first = await start({ endpoint: collector.endpoint, samplingRatePerMillion: 1_000_000 });
    try {
      await expect(start({ endpoint: collector.endpoint, samplingRatePerMillion: 1_000_000 })).rejects.toThrow(/OpenTelemetry is already registered in this process/);
      expect(tracer().startSpan('probe').isRecording()).toBe(true);
      expect((await createNamespace(first.url, 'first-still-traced')).status).toBe(201);
    } finally {
      await first.close();
    }
    expect(collector.spans.find((s) => s.attributes['k8s.object.name'] === 'first-still-traced')).toBeDefined();
  });
});
