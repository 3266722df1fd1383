"""A python3-kubernetes watch that meets an injected 410 Expired, then relists and watches again.

Usage: watch_expire.py <server-url> <group>. Prints what it saw as one JSON document; the vitest suite
test/clients/faults.test.ts asserts on it.
"""
import json
import sys

from kubernetes import client, watch
from kubernetes.client.rest import ApiException

server, group = sys.argv[1], sys.argv[2]
config = client.Configuration()
config.host = server
custom = client.CustomObjectsApi(client.ApiClient(config))
args = (group, "v1", "default", "widgets")
out = {"seen": []}


def widget(name):
    return {"apiVersion": group + "/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"size": 1}}


rv = custom.list_namespaced_custom_object(*args)["metadata"]["resourceVersion"]
custom.create_namespaced_custom_object(*args, widget("py-1"))
try:
    # With timeout_seconds the client raises on the first 410 instead of retrying (clients.md 2).
    for ev in watch.Watch().stream(custom.list_namespaced_custom_object, *args, resource_version=rv, timeout_seconds=10):
        out["seen"].append([ev["type"], ev["object"]["metadata"]["name"]])
except ApiException as e:
    out["error"] = {"status": e.status, "reason": e.reason}

listed = custom.list_namespaced_custom_object(*args)
out["relisted"] = [i["metadata"]["name"] for i in listed["items"]]
custom.create_namespaced_custom_object(*args, widget("py-2"))
out["after"] = []
for ev in watch.Watch().stream(custom.list_namespaced_custom_object, *args, resource_version=listed["metadata"]["resourceVersion"], timeout_seconds=2):
    out["after"].append([ev["type"], ev["object"]["metadata"]["name"]])
print(json.dumps(out))
