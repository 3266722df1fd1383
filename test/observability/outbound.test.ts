/**
 * outboundCall: a webhook call as a client span, child of the active span, whose W3C trace context
 * reaches the called server; startTracing's provider exports it to a real collector stand-in.
 */
import { createServer, request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exporterUrl, startTracing } from '../../src/observability/tracing.js';
import { inSpan, outboundCall } from '../../src/observability/spans.js';
import { testPki } from '../auth/oidc-issuer.js';
import { OtlpCollector } from './otlp-collector.js';

const pki = testPki('webhook');
const collector = new OtlpCollector();
let webhook: Server;
let webhookUrl = '';
const received: (string | undefined)[] = [];

beforeAll(async () => {
  await collector.start();
  webhook = createServer({ cert: pki.cert, key: pki.key }, (req, res) => {
    received.push(req.headers.traceparent as string | undefined);
    res.statusCode = req.url === '/fail' ? 500 : 200;
    res.end('{}');
  });
  await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
  webhookUrl = `https://127.0.0.1:${(webhook.address() as AddressInfo).port}`;
});
afterAll(async () => {
  webhook.closeAllConnections();
  await new Promise<void>((resolve) => webhook.close(() => resolve()));
  await collector.stop();
});

function post(path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${webhookUrl}${path}`, { method: 'POST', ca: pki.caPem, headers }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(200) : reject(new Error(`webhook answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end('{}');
  });
}

describe('outbound calls', () => {
  it('are client spans under the active span, and the called server gets their traceparent', async () => {
    const tracing = startTracing({ endpoint: collector.endpoint, samplingRatePerMillion: 1_000_000 });
    try {
      await inSpan('request', {}, async () => {
        await outboundCall('admission.webhook', { 'server.address': new URL(webhookUrl).host }, (headers) => post('/ok', headers));
        await expect(outboundCall('admission.webhook', { 'server.address': new URL(webhookUrl).host }, (headers) => post('/fail', headers))).rejects.toThrow(/500/);
      });
    } finally {
      await tracing.shutdown();
    }
    const parent = collector.spans.find((s) => s.name === 'request')!;
    const calls = collector.spans.filter((s) => s.name === 'admission.webhook');
    expect(calls).toHaveLength(2);
    for (const c of calls) expect(c).toMatchObject({ kind: 3, traceId: parent.traceId, parentSpanId: parent.spanId, attributes: { 'server.address': new URL(webhookUrl).host } });
    expect(calls.map((c) => c.statusCode).sort()).toEqual([0, 2]);
    expect(received).toEqual(calls.map((c) => `00-${c.traceId}-${c.spanId}-01`));
  });

  it('send no trace context when tracing is not configured', async () => {
    received.length = 0;
    await outboundCall('admission.webhook', {}, (headers) => post('/ok', headers));
    expect(received).toEqual([undefined]);
  });
});

describe('the exporter address of a tracing endpoint', () => {
  it.each([
    ['localhost:4317', 'http://localhost:4317'],
    ['dns:///collector.example:4317', 'http://collector.example:4317'],
    ['dns://8.8.8.8/collector.example:4317', 'http://collector.example:4317'],
    ['unix:///run/otel.sock', 'unix:///run/otel.sock'],
  ])('%s → %s', (endpoint, url) => expect(exporterUrl(endpoint)).toBe(url));

  it('unix-abstract is refused with the reason', () => expect(() => exporterUrl('unix-abstract:otel')).toThrow(/unix-abstract sockets are not supported/));
});
