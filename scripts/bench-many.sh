#!/usr/bin/env bash
# bench-many: 1000 small oracle scenarios (one step each, -j 2), with the output on disk
# (the durable default: each transcript fsynced at its step boundaries and its end) and on
# tmpfs (/dev/shm, where fsync is free), so the ratio is what durability costs here.
#
#   ./scripts/bench-many.sh           (`make bench-many`; N, default 1000)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000}
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-many.XXXXXX")
shm=""
cleanup() { rm -rf "$work" ${shm:+"$shm"}; }
trap cleanup EXIT
make --no-print-directory -s build BIN="$work/runner" # the binary as make and the releases build it
cat >"$work/tiny.yaml" <<'YAML'
name: tiny
prompt: Say you are done.
tools: [read_file]
assert:
  - completed: true
reference:
  - task_complete: {summary: done}
YAML
time_run() { # DIR -> seconds
  local s e
  s=$(date +%s%N)
  "$work/runner" run --sandbox none --cache-dir "" -j 2 --repeat "$N" --out "$1" "$work/tiny.yaml" >/dev/null 2>&1
  e=$(date +%s%N)
  awk -v ns=$((e - s)) 'BEGIN { printf "%.2f", ns / 1e9 }'
}
disk=$(time_run "$work/out")
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
  shm=$(mktemp -d /dev/shm/bench-many.XXXXXX)
  tmpfs=$(time_run "$shm/out")
else
  tmpfs=""
fi
echo
echo "bench-many: $N one-step oracle scenarios, -j 2, --sandbox none"
awk -v d="$disk" -v t="$tmpfs" -v n="$N" 'BEGIN {
  printf "on disk (%s): %.2f s, %.0f scenarios/s\n", "durable", d, n / d
  if (t != "") printf "on tmpfs:      %.2f s, %.0f scenarios/s; disk/tmpfs %.1fx (the cost of fsync)\n", t, n / t, d / t
}'
