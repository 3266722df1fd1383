#!/usr/bin/env bash
# What the tests drive that npm does not install: Debian packages (and kubectl, which every machine
# of this kind has on PATH with kubectl.1.27 … kubectl.1.33 beside it). The one list: `npm test` runs
# this first (pretest), .ci/run runs it, and the vitest run checks it again (--check) in its global
# setup. What is missing is installed when this can (root, apt-get); otherwise it stops before the
# first test with one line naming the packages and the command, so no test skips for want of a tool.
set -euo pipefail

# Where the system's files are looked for: '' (the machine's own); a test points it at an empty folder.
root="${ORCHD_SYSTEM_ROOT:-}"
missing=()
# python3-kubernetes: a real client, run by Debian's /usr/bin/python3 (test/clients/python.test.ts).
"$root/usr/bin/python3" -c 'import kubernetes' >/dev/null 2>&1 || missing+=(python3-kubernetes)
# chromium: drives the /debug/timeline page headless (test/timetravel/timeline.test.ts).
[ -x "$root/usr/bin/chromium" ] || missing+=(chromium)
# etcd-server: the etcd log backend and replicas run a real etcd (test/helpers/etcd.ts).
[ -x "$root/usr/bin/etcd" ] || missing+=(etcd-server)
# prometheus: scrapes /metrics as a real Prometheus server does (test/observability/prometheus.test.ts).
[ -x "$root/usr/bin/prometheus" ] || missing+=(prometheus)

if [ ${#missing[@]} -gt 0 ] && [ "${1:-}" != --check ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing the Debian packages the tests need: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq "${missing[@]}" >/dev/null
  exec bash "$0" --check
fi
if [ ${#missing[@]} -gt 0 ]; then
  sudo=''; [ "$(id -u)" = 0 ] || sudo='sudo '
  echo "the tests need the Debian packages ${missing[*]}: run '${sudo}apt-get install -y ${missing[*]}', then npm test" >&2
  exit 1
fi
if ! command -v kubectl >/dev/null 2>&1 || ! ls "$(dirname "$(readlink -f "$(command -v kubectl)")")"/kubectl.1.27 >/dev/null 2>&1; then
  echo "the tests need kubectl on PATH with kubectl.1.27 … kubectl.1.33 beside the file it links to (part of this machine kind, not a Debian package)" >&2
  exit 1
fi
