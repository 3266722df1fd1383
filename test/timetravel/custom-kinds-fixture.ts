/**
 * A server's history holding CustomResourceDefinitions and their objects, for the time-travel
 * commands to read: webapps (namespaced, short name wa) and widgets (cluster-scoped, short name wdg)
 * defined and written to, and gadgets defined, written to and deleted again (its CRD with them).
 */
import { expect } from 'vitest';
import { call } from '../helpers/server.js';
import { eventually } from '../helpers/poll.js';
import { createEvent, createNamespace } from '../watch/objects.js';
import { crdOf } from '../helpers/crd.js';

export const NS = 'ck';
export const CRDS = '/apis/apiextensions.orch.io/v1/customresourcedefinitions';
export const WEBAPPS = `/apis/apps.example.com/v1/namespaces/${NS}/webapps`;

export const crd = (group: string, plural: string, kind: string, scope: 'Namespaced' | 'Cluster', shortNames: string[]): unknown =>
  crdOf(group, plural, kind, {
    scope,
    names: { singular: kind.toLowerCase(), listKind: `${kind}List`, shortNames },
    schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
  });

const rvOf = (r: { status: number; body: any }, what: string): number => {
  expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
  return Number(r.body.metadata.resourceVersion);
};

/** The versions of the writes made, by name. */
export type Versions = Record<'ns' | 'event' | 'webappsCrd' | 'widgetsCrd' | 'gadgetsCrd' | 'gadget' | 'gadgetsGone' | 'shop' | 'shopScaled' | 'cart' | 'cartGone' | 'widget', number>;

/** Writes the history through the server at base. */
export async function writeHistory(base: string): Promise<Versions> {
  const v: Partial<Versions> = {};
  v.ns = await createNamespace(base, NS);
  v.event = await createEvent(base, 'before-crds', NS);
  // A CRD that comes and goes before the others: its kind names nothing at the head.
  v.gadgetsCrd = rvOf(await call(base, 'POST', CRDS, crd('old.example.com', 'gadgets', 'Gadget', 'Namespaced', ['gdg'])), 'gadgets CRD');
  v.gadget = rvOf(
    await call(base, 'POST', `/apis/old.example.com/v1/namespaces/${NS}/gadgets`, { apiVersion: 'old.example.com/v1', kind: 'Gadget', metadata: { name: 'g1' }, spec: { size: 1 } }),
    'gadget',
  );
  expect((await call(base, 'DELETE', `${CRDS}/gadgets.old.example.com`)).status).toBeLessThan(300);
  // The CRD goes once its objects have: its cleanup controller deletes them first.
  await eventually(async () => (await call(base, 'GET', `${CRDS}/gadgets.old.example.com`)).status === 404, { what: 'the gadgets CRD gone' });
  v.gadgetsGone = Number((await call(base, 'GET', `${CRDS}`)).body.metadata.resourceVersion);
  v.webappsCrd = rvOf(await call(base, 'POST', CRDS, crd('apps.example.com', 'webapps', 'WebApp', 'Namespaced', ['wa'])), 'webapps CRD');
  v.widgetsCrd = rvOf(await call(base, 'POST', CRDS, crd('things.example.com', 'widgets', 'Widget', 'Cluster', ['wdg'])), 'widgets CRD');
  // Established (the controller's status write) before the objects, so the versions below are theirs alone.
  await eventually(async () => (await call(base, 'GET', `${CRDS}/widgets.things.example.com`)).body.status?.conditions?.some((c: any) => c.type === 'Established' && c.status === 'True'), {
    what: 'widgets Established',
  });
  const shop = await call(base, 'POST', WEBAPPS, { apiVersion: 'apps.example.com/v1', kind: 'WebApp', metadata: { name: 'shop', labels: { tier: 'web' } }, spec: { replicas: 1 } });
  v.shop = rvOf(shop, 'shop');
  // Refused (it exists): no log entry, a line of the audit log.
  expect((await call(base, 'POST', WEBAPPS, { apiVersion: 'apps.example.com/v1', kind: 'WebApp', metadata: { name: 'shop' }, spec: { replicas: 9 } })).status).toBe(409);
  v.shopScaled = rvOf(await call(base, 'PUT', `${WEBAPPS}/shop`, { ...shop.body, spec: { replicas: 3 } }), 'shop scaled');
  v.cart = rvOf(await call(base, 'POST', WEBAPPS, { apiVersion: 'apps.example.com/v1', kind: 'WebApp', metadata: { name: 'cart' }, spec: { replicas: 1 } }), 'cart');
  expect((await call(base, 'DELETE', `${WEBAPPS}/cart`)).status).toBe(200);
  v.cartGone = Number((await call(base, 'GET', WEBAPPS)).body.metadata.resourceVersion);
  v.widget = rvOf(
    await call(base, 'POST', '/apis/things.example.com/v1/widgets', { apiVersion: 'things.example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { colour: 'red' } }),
    'widget',
  );
  return v as Versions;
}
