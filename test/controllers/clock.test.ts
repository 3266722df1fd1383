/**
 * The server's clock (serve's `now`) is the only clock its timestamps read: the registry's creation
 * time, the field manager's managedFields times (writes and /scale), and the CRD controller's
 * condition times all come from it, never from the wall clock.
 */
import { describe, expect, it } from 'vitest';
import { crdOf } from '../helpers/crd.js';
import { eventually } from '../helpers/poll.js';
import { call, serverForFile } from '../helpers/server.js';

// Far from today, so a timestamp read from the wall clock cannot match it.
const FIXED = '2031-04-05T06:07:08Z';
const file = serverForFile({ now: () => Date.parse(FIXED) });
const ROBOTS = '/apis/clock.example.com/v1/namespaces/default/robots';
const REPLICAS = { type: 'object', properties: { replicas: { type: 'integer' } } };
const times = (o: any): string[] => (o.metadata.managedFields ?? []).map((m: { time: string }) => m.time);

describe("the server's clock", () => {
  it("a CRD's conditions move at the server's time", async () => {
    const crd = crdOf('clock.example.com', 'robots', 'Robot', {
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: REPLICAS, status: REPLICAS } } },
          subresources: { scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
        },
      ],
    });
    expect((await call(file.base, 'POST', '/apis/apiextensions.orch.io/v1/customresourcedefinitions', crd)).status).toBe(201);
    const established = await eventually(async () => {
      const got = await call(file.base, 'GET', '/apis/apiextensions.orch.io/v1/customresourcedefinitions/robots.clock.example.com');
      return got.body.status?.conditions?.find((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True');
    });
    expect(established.lastTransitionTime).toBe(FIXED);
  });

  it('managedFields of a write and of a /scale write carry the time of the same clock as creationTimestamp', async () => {
    await eventually(async () => (await call(file.base, 'GET', ROBOTS)).status === 200);
    const made = await call(file.base, 'POST', `${ROBOTS}?fieldManager=maker`, {
      apiVersion: 'clock.example.com/v1',
      kind: 'Robot',
      metadata: { name: 'r1', labels: { made: 'here' } },
      spec: { replicas: 1 },
    });
    expect(made.status).toBe(201);
    expect(made.body.metadata.creationTimestamp).toBe(FIXED);
    expect(times(made.body)).toEqual([FIXED]);
    const scale = await call(file.base, 'GET', `${ROBOTS}/r1/scale`);
    expect((await call(file.base, 'PUT', `${ROBOTS}/r1/scale?fieldManager=scaler`, { ...scale.body, spec: { replicas: 3 } })).status).toBe(200);
    const after = await call(file.base, 'GET', `${ROBOTS}/r1`);
    expect(after.body.metadata.managedFields.map((m: { manager: string }) => m.manager)).toEqual(['maker', 'scaler']);
    expect(times(after.body)).toEqual([FIXED, FIXED]);
  });
});
