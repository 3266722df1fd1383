"""Drives orchd with python3-kubernetes (the Debian package) and prints what it saw as one JSON document.

Usage: crud_watch.py <server-url> <cache-dir>. The vitest suite test/clients/python.test.ts asserts on
the output; this script only records, so a wrong server answer shows up as a wrong value there.
"""
import json
import os
import sys

from kubernetes import client, watch
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient

server, cache_dir = sys.argv[1], sys.argv[2]

config = client.Configuration()
config.host = server
api = client.ApiClient(config)
dyn = DynamicClient(api, cache_file=os.path.join(cache_dir, "discovery.json"))
custom = client.CustomObjectsApi(api)
out = {}

vap = dyn.resources.get(api_version="admissionregistration.orch.io/v1", kind="ValidatingAdmissionPolicy")
events = dyn.resources.get(api_version="events.orch.io/v1", kind="Event")
out["discovered"] = {
    "vap": {"name": vap.name, "namespaced": vap.namespaced, "verbs": sorted(vap.verbs or [])},
    "event": {"name": events.name, "namespaced": events.namespaced, "shortNames": events.short_names},
}

start_rv = vap.get().metadata.resourceVersion
out["startRv"] = start_rv


def policy(name, expression, message):
    return {
        "apiVersion": "admissionregistration.orch.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name, "labels": {"client": "python"}},
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"]}
                ]
            },
            "validations": [{"expression": expression, "message": message}],
        },
    }


created = vap.create(body=policy("py-demo", "object.spec.replicas <= 5", "at most 5"), field_manager="py")
out["created"] = created.to_dict()

got = vap.get(name="py-demo")
out["got"] = got.to_dict()

listed = vap.get(label_selector="client=python")
out["listed"] = {"kind": listed.kind, "apiVersion": listed.apiVersion, "names": [i.metadata.name for i in listed.items],
                 "resourceVersion": listed.metadata.resourceVersion}

body = got.to_dict()
body["spec"]["validations"][0]["expression"] = "object.spec.replicas <= 7"
replaced = vap.replace(body=body)
out["replaced"] = replaced.to_dict()

# A replace carrying the resourceVersion we already overwrote is refused: the optimistic lock.
try:
    vap.replace(body=body)
    out["staleReplace"] = None
except ApiException as e:
    out["staleReplace"] = {"status": e.status, "body": json.loads(e.body)}

try:
    vap.get(name="no-such-policy")
    out["missing"] = None
except ApiException as e:
    out["missing"] = {"status": e.status, "body": json.loads(e.body)}

deleted = vap.delete(name="py-demo")
out["deleted"] = deleted.to_dict()

# The dynamic client's watch passes watch=True (capitalised) and ends when the server closes the stream
# after timeout_seconds; it replays everything since start_rv.
seen = []
for ev in vap.watch(resource_version=start_rv, timeout=2):
    seen.append({"type": ev["type"], "name": ev["raw_object"]["metadata"]["name"],
                 "rv": ev["raw_object"]["metadata"]["resourceVersion"]})
out["dynamicWatch"] = seen

# The same through CustomObjectsApi + watch.Watch, as controllers written against the typed client do.
for name in ("py-a", "py-b"):
    custom.create_cluster_custom_object("admissionregistration.orch.io", "v1", "validatingadmissionpolicies",
                                        policy(name, "true", "never"))
seen = []
w = watch.Watch()
for ev in w.stream(custom.list_cluster_custom_object, "admissionregistration.orch.io", "v1",
                   "validatingadmissionpolicies", label_selector="client=python", timeout_seconds=1):
    seen.append({"type": ev["type"], "name": ev["object"]["metadata"]["name"]})
out["customWatch"] = seen

event = events.create(namespace="default", body={
    "apiVersion": "events.orch.io/v1",
    "kind": "Event",
    "metadata": {"generateName": "py-"},
    "eventTime": "2026-01-02T03:04:05.000000Z",
    "reportingController": "example.com/py",
    "reportingInstance": "py-0",
    "action": "Test",
    "reason": "Created",
    "type": "Normal",
    "note": "from python",
    "regarding": {"kind": "ValidatingAdmissionPolicy", "name": "py-a"},
})
out["event"] = event.to_dict()
page = custom.list_namespaced_custom_object("events.orch.io", "v1", "default", "events", limit=1)
out["eventPage"] = {"kind": page["kind"], "names": [i["metadata"]["name"] for i in page["items"]]}

# namespace "" reads every namespace, as list_namespaced_event('') relies on (the path is namespaces//events).
other = events.create(namespace="kube-system", body={**event.to_dict(), "metadata": {"generateName": "py-"}})
every = custom.list_namespaced_custom_object("events.orch.io", "v1", "", "events")
out["everyNamespace"] = {
    "created": sorted([event.metadata.name, other.metadata.name]),
    "listed": sorted(i["metadata"]["name"] for i in every["items"]),
    "watched": sorted(e["object"]["metadata"]["name"] for e in watch.Watch().stream(
        custom.list_namespaced_custom_object, "events.orch.io", "v1", "", "events", timeout_seconds=1)),
}

# The typed CoreV1Api on core v1 Namespaces: its models parse creationTimestamp into a datetime and send
# it back as "+00:00" on replace, which the server must take as the same time.
core = client.CoreV1Api(api)
ns_rv = core.list_namespace().metadata.resource_version
ns = core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py-ns", labels={"team": "py"})))
ns.metadata.labels["tier"] = "gold"
ns_replaced = core.replace_namespace("py-ns", ns)
ns_deleted = core.delete_namespace("py-ns")
ns_events = [(e["type"], e["object"].metadata.name, e["object"].status.phase)
             for e in watch.Watch().stream(core.list_namespace, resource_version=ns_rv, timeout_seconds=1)]
out["namespace"] = {
    "phase": ns.status.phase,
    "created": ns.metadata.creation_timestamp.isoformat(),
    "replacedLabels": ns_replaced.metadata.labels,
    "replacedCreated": ns_replaced.metadata.creation_timestamp.isoformat(),
    "deleted": ns_deleted.status,
    "watch": ns_events,
}

json.dump(out, sys.stdout)
