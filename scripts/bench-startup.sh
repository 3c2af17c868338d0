#!/usr/bin/env bash
# bench-startup: process start to the first model request, and to exit after a one-step
# scenario, for the built binary against an instant fake model, each as a ratio to a Go
# program that only posts that request (the floor on this machine, measured in the same run).
# Aims (issue 12): first request under 10 ms with --sandbox none, under 15 ms with bwrap.
# Each row starts with one untimed run (page cache, and the sandbox probe's per-machine
# cache that every later start on the machine finds).
#
#   ./scripts/bench-startup.sh        (`make bench-startup`; RUNS, default 30, per row)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-30}
before=$(cut -d' ' -f1-3 /proc/loadavg)
out=$(go test -run '^$' -bench StartToFirstRequest -benchtime "${RUNS}x" ./tests)
echo "$out" | grep -E '^Benchmark' >&2 || { echo "$out" >&2; exit 1; }
echo "$out" | awk -v load="$before -> $(cut -d' ' -f1-3 /proc/loadavg)" '
  /^BenchmarkStartToFirstRequest\// {
    split($1, p, "/"); name = p[2]; sub(/-[0-9]+$/, "", name)
    for (i = 2; i <= NF; i++) { if ($i == "ms/first-request") first[name] = $(i-1); if ($i == "ms/total") total[name] = $(i-1) }
    order[++n] = name
  }
  END {
    printf "\nstart-up, mean of the runs (ms)               first request   ratio to bare   exit   ratio\n"
    for (i = 1; i <= n; i++) {
      k = order[i]
      printf "%-46s %10.2f %14.2fx %9.2f %7.2fx\n", k, first[k], first[k] / first["bare"], total[k], total[k] / total["bare"]
    }
    aim["sandbox=none"] = 10; aim["sandbox=bwrap"] = 15
    for (k in aim) if (k in first)
      printf "aim %s: first request under %d ms: %s (%.2f ms)\n", k, aim[k], (first[k] < aim[k] ? "met" : "NOT MET"), first[k]
    printf "load average %s\n", load
  }'
