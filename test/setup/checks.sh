#!/usr/bin/env bash
# What `npm test` checks before it runs the tests: the type-check, the linter and the formatter.
# Each is a single-threaded process, so on two cores they run side by side: the linter (the longest:
# its type-aware rules build a program of their own, nothing shared with tsc) beside the type-check
# and then the formatter. Each one's output is printed when it ends; the script fails if any failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=node_modules/.bin
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

check() {
  local name=$1
  shift
  "$@" >"$out/$name" 2>&1
  local rc=$?
  cat "$out/$name"
  [ "$rc" = 0 ] || echo "$name failed (exit $rc): $*" >&2
  return "$rc"
}

{
  check typecheck "$bin/tsc" -p tsconfig.json --noEmit
  typecheck=$?
  check format "$bin/prettier" --check .
  format=$?
  [ "$typecheck" = 0 ] && [ "$format" = 0 ]
} &
beside=$!
check lint "$bin/eslint" .
lint=$?
wait "$beside"
beside=$?
[ "$lint" = 0 ] && [ "$beside" = 0 ]
