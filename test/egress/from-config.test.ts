import { writeFileSync } from 'node:fs';
import { createServer, request, type Agent, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Connection, EgressSelectorConfiguration } from '../../src/config/egress-selector.js';
import { egressFromConfig } from '../../src/egress/from-config.js';
import { testPki } from '../auth/oidc-issuer.js';
import { ConnectProxy, type ProxyListen } from './connect-proxy.js';
import { tempDir } from '../helpers/temp.js';

/** The destination every test reaches: an HTTPS server with its own CA, naming the path it served. */
const destinationPki = testPki('destination');
let destination: Server;
let destinationUrl = '';
const dir = tempDir('orchd-egress-');

beforeAll(async () => {
  destination = createServer({ cert: destinationPki.cert, key: destinationPki.key }, (req, res) => res.end(JSON.stringify({ served: req.url })));
  await new Promise<void>((resolve) => destination.listen(0, '127.0.0.1', resolve));
  destinationUrl = `https://127.0.0.1:${(destination.address() as AddressInfo).port}`;
});
afterAll(async () => {
  destination.closeAllConnections();
  await new Promise<void>((resolve) => destination.close(() => resolve()));
});

const proxies: ConnectProxy[] = [];
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.stop()));
});
async function proxy(listen: ProxyListen): Promise<ConnectProxy> {
  const p = await new ConnectProxy(listen).start();
  proxies.push(p);
  return p;
}

function get(agent: Agent, path: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(`${destinationUrl}${path}`, { agent }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('no answer in 10 s')));
    req.end();
  });
}

const destinationTls = () => ({ ca: destinationPki.caPem });
const config = (selections: EgressSelectorConfiguration['selections']): EgressSelectorConfiguration => ({ selections });
const httpConnectTcp = (url: string): Connection => ({ proxyProtocol: 'HTTPConnect', transport: { tcp: { url } } });

describe('egress selection', () => {
  it('Direct dials the destination itself: the proxy sees no tunnel', async () => {
    const p = await proxy({ tcp: true });
    const egress = egressFromConfig(config({ controlplane: { proxyProtocol: 'Direct' }, cluster: httpConnectTcp(p.address) }));
    expect(await get(egress.httpsAgent('controlplane', destinationTls()), '/direct')).toEqual({ status: 200, body: { served: '/direct' } });
    expect(p.tunnels).toEqual([]);
  });

  it('a selection the file does not name is dialed directly', async () => {
    const p = await proxy({ tcp: true });
    const egress = egressFromConfig(config({ cluster: httpConnectTcp(p.address) }));
    expect((await get(egress.httpsAgent('etcd', destinationTls()), '/unnamed')).status).toBe(200);
    expect(p.tunnels).toEqual([]);
  });

  it('HTTPConnect over TCP (http://) tunnels through the proxy, one tunnel per kept-alive connection', async () => {
    const p = await proxy({ tcp: true });
    const egress = egressFromConfig(config({ cluster: httpConnectTcp(p.address) }));
    const agent = egress.httpsAgent('cluster', destinationTls());
    expect(await get(agent, '/first')).toEqual({ status: 200, body: { served: '/first' } });
    expect(await get(agent, '/second')).toEqual({ status: 200, body: { served: '/second' } });
    expect(p.tunnels).toEqual([new URL(destinationUrl).host]);
    agent.destroy();
  });

  it('HTTPConnect over UDS tunnels through the proxy listening on a unix socket', async () => {
    const p = await proxy({ uds: join(dir, 'proxy.sock') });
    const egress = egressFromConfig(config({ cluster: { proxyProtocol: 'HTTPConnect', transport: { uds: { udsName: p.address } } } }));
    expect(await get(egress.httpsAgent('cluster', destinationTls()), '/uds')).toEqual({ status: 200, body: { served: '/uds' } });
    expect(p.tunnels).toEqual([new URL(destinationUrl).host]);
  });

  it('HTTPConnect over TCP (https://) verifies the proxy with caBundle and presents clientCert/clientKey', async () => {
    const proxyPki = testPki('proxy');
    const clientPki = testPki('orchd-egress-client', { clientAuth: true });
    const p = await proxy({ tls: { serving: proxyPki, clientCa: clientPki.caPem } });
    const file = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const tlsConfig = { caBundle: file('proxy-ca.crt', proxyPki.caPem), clientCert: file('client.crt', clientPki.cert), clientKey: file('client.key', clientPki.key) };
    const egress = egressFromConfig(config({ controlplane: { proxyProtocol: 'HTTPConnect', transport: { tcp: { url: p.address, tlsConfig } } } }));
    expect(await get(egress.httpsAgent('controlplane', destinationTls()), '/tls')).toEqual({ status: 200, body: { served: '/tls' } });
    expect(p.tunnels).toEqual([new URL(destinationUrl).host]);
    expect(p.clientNames).toEqual(['orchd-egress-client']);

    // A proxy the CA bundle does not vouch for is not used.
    const otherCa = file('other-ca.crt', testPki('other').caPem);
    const distrusting = egressFromConfig(config({ controlplane: { proxyProtocol: 'HTTPConnect', transport: { tcp: { url: p.address, tlsConfig: { ...tlsConfig, caBundle: otherCa } } } } }));
    await expect(get(distrusting.httpsAgent('controlplane', destinationTls()), '/x')).rejects.toMatchObject({
      code: 'EGRESS_PROXY_UNREACHABLE',
      message: expect.stringMatching(/cannot connect to egress proxy https:\/\/127\.0\.0\.1:\d+: .*certificate/),
    });
    expect(p.tunnels).toHaveLength(1);
  });

  it("the destination TLS runs inside the tunnel: the caller's CA still decides", async () => {
    const p = await proxy({ tcp: true });
    const egress = egressFromConfig(config({ cluster: httpConnectTcp(p.address) }));
    await expect(get(egress.httpsAgent('cluster', { ca: testPki('stranger').caPem }), '/x')).rejects.toThrow(/certificate/);
    expect(p.tunnels).toHaveLength(1);
  });

  it('a proxy that refuses CONNECT is a clear error naming the proxy, the target and the status', async () => {
    const p = await proxy({ tcp: true });
    p.refuseWith = 403;
    const egress = egressFromConfig(config({ cluster: httpConnectTcp(p.address) }));
    await expect(get(egress.httpsAgent('cluster', destinationTls()), '/x')).rejects.toMatchObject({
      code: 'EGRESS_PROXY_REFUSED',
      message: `egress proxy ${p.address} refused CONNECT ${new URL(destinationUrl).host}: 403 Forbidden`,
    });
  });

  it('an unreachable proxy is a clear error', async () => {
    const p = await proxy({ tcp: true });
    const closed = p.address;
    await p.stop();
    proxies.splice(proxies.indexOf(p), 1);
    const egress = egressFromConfig(config({ cluster: httpConnectTcp(closed) }));
    await expect(get(egress.httpsAgent('cluster', destinationTls()), '/x')).rejects.toMatchObject({
      code: 'EGRESS_PROXY_UNREACHABLE',
      message: expect.stringMatching(new RegExp(`^cannot connect to egress proxy ${closed}: .*ECONNREFUSED`)),
    });
    const uds = egressFromConfig(config({ cluster: { proxyProtocol: 'HTTPConnect', transport: { uds: { udsName: join(dir, 'nobody.sock') } } } }));
    await expect(get(uds.httpsAgent('cluster', destinationTls()), '/x')).rejects.toMatchObject({ code: 'EGRESS_PROXY_UNREACHABLE', message: expect.stringMatching(/nobody\.sock: .*ENOENT/) });
  });

  it('a proxy that never answers CONNECT fails after the connect timeout', async () => {
    const p = await proxy({ tcp: true });
    p.silent = true;
    const egress = egressFromConfig(config({ cluster: httpConnectTcp(p.address) }), { connectTimeoutMs: 200 });
    await expect(get(egress.httpsAgent('cluster', destinationTls()), '/x')).rejects.toMatchObject({
      code: 'EGRESS_PROXY_TIMEOUT',
      message: expect.stringMatching(/no answer to CONNECT .* within 200 ms/),
    });
  });

  it('GRPC (the konnectivity tunnel) stops the start with the reason', () => {
    expect(() => egressFromConfig(config({ etcd: { proxyProtocol: 'GRPC', transport: { uds: { udsName: '/run/konnectivity.sock' } } } }))).toThrow(
      /egress selection "etcd": proxyProtocol GRPC is not supported by orchd: .*konnectivity.*use proxyProtocol HTTPConnect/,
    );
  });

  it('an unreadable TLS file stops the start', () => {
    const tlsConfig = { clientCert: join(dir, 'gone.crt'), clientKey: join(dir, 'gone.key') };
    expect(() => egressFromConfig(config({ cluster: { proxyProtocol: 'HTTPConnect', transport: { tcp: { url: 'https://127.0.0.1:1', tlsConfig } } } }))).toThrow(
      /egress selection "cluster": cannot read the client certificate .*gone\.crt/,
    );
  });
});
