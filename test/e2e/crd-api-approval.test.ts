/**
 * Protected groups (src/resources/crd/api-approval.ts), on a real orchd: a CRD in a `k8s.io`,
 * `kubernetes.io` or `orch.io` group needs the api-approved.kubernetes.io annotation, and its
 * KubernetesAPIApprovalPolicyConformant condition says what the annotation says.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crdOf } from '../helpers/crd.js';
import { eventually } from '../helpers/poll.js';
import { call, startServer, type TestServer } from '../helpers/server.js';

const CRDS = '/apis/apiextensions.orch.io/v1/customresourcedefinitions';
const KEY = 'api-approved.kubernetes.io';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

function crd(group: string, plural: string, annotation?: string): any {
  const c = crdOf(group, plural, plural[0]!.toUpperCase() + plural.slice(1, -1));
  if (annotation !== undefined) c.metadata.annotations = { [KEY]: annotation };
  return c;
}

async function condition(name: string): Promise<any> {
  return eventually(
    async () => {
      const r = await call(server.url, 'GET', `${CRDS}/${name}`);
      return (r.body.status?.conditions ?? []).find((x: any) => x.type === 'KubernetesAPIApprovalPolicyConformant');
    },
    { what: `the approval condition of ${name}` },
  );
}

describe('protected groups', () => {
  it.each(['things.k8s.io', 'x.kubernetes.io', 'x.orch.io', 'k8s.io'])('%s without the annotation: Required, in kube-apiserver words', async (group) => {
    const r = await call(server.url, 'POST', CRDS, crd(group, 'widgets'));
    expect(r.status).toBe(422);
    expect(r.body.details.causes).toEqual([
      {
        reason: 'FieldValueRequired',
        field: `metadata.annotations[${KEY}]`,
        message: `Required value: protected groups must have approval annotation "${KEY}", see https://github.com/kubernetes/enhancements/pull/1111`,
      },
    ]);
  });

  it('an annotation that is neither a URL nor "unapproved…" is Invalid', async () => {
    const r = await call(server.url, 'POST', CRDS, crd('bad.k8s.io', 'widgets', 'yes please'));
    expect(r.status).toBe(422);
    expect(r.body.details.causes[0]).toMatchObject({ reason: 'FieldValueInvalid', field: `metadata.annotations[${KEY}]` });
    expect(r.body.details.causes[0].message).toBe(
      `Invalid value: "yes please": protected groups must have approval annotation "${KEY}" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111`,
    );
  });

  it('"unapproved, …" is created, its condition False', async () => {
    expect((await call(server.url, 'POST', CRDS, crd('draft.k8s.io', 'widgets', 'unapproved, experimental'))).status).toBe(201);
    expect(await condition('widgets.draft.k8s.io')).toMatchObject({ status: 'False', reason: 'UnapprovedAnnotation', message: 'not approved: "unapproved, experimental"' });
  });

  it('an approval URL is created, its condition True', async () => {
    const url = 'https://github.com/kubernetes/kubernetes/pull/78458';
    expect((await call(server.url, 'POST', CRDS, crd('approved.k8s.io', 'widgets', url))).status).toBe(201);
    expect(await condition('widgets.approved.k8s.io')).toMatchObject({ status: 'True', reason: 'ApprovedAnnotation', message: `approved in ${url}` });
  });

  it('an update that leaves the approval state as it was is not refused; one that removes it is', async () => {
    const name = 'widgets.draft.k8s.io';
    const merge = { 'Content-Type': 'application/merge-patch+json' };
    expect((await call(server.url, 'PATCH', `${CRDS}/${name}`, { metadata: { labels: { a: 'b' } } }, merge)).status).toBe(200);
    const removed = await call(server.url, 'PATCH', `${CRDS}/${name}`, { metadata: { annotations: { [KEY]: null } } }, merge);
    expect(removed.status).toBe(422);
  });

  it('other groups need no annotation and have no such condition', async () => {
    expect((await call(server.url, 'POST', CRDS, crd('example.com', 'widgets'))).status).toBe(201);
    const r = await eventually(
      async () => {
        const g = await call(server.url, 'GET', `${CRDS}/widgets.example.com`);
        return (g.body.status?.conditions ?? []).some((c: any) => c.type === 'Established') ? g : undefined;
      },
      { what: 'Established' },
    );
    expect(r.body.status.conditions.map((c: any) => c.type)).not.toContain('KubernetesAPIApprovalPolicyConformant');
  });
});
