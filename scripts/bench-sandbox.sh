#!/usr/bin/env bash
# bench-sandbox: what the runner adds to a sandboxed command, against the same confinement
# started bare, measured in the same run (BenchmarkSandboxedStep in tools/exec/sandbox):
#
#   ./scripts/bench-sandbox.sh       (from the repo root; `make bench-sandbox` runs it)
#
# For each sandbox that works here (bwrap, landlock) the benchmark alternates, in one loop,
# a run_in_terminal call of `true` with its reference:
#   - bwrap: the very argv the runner computes for that call (mounts, namespaces,
#     environment, command), exec'd directly: no cgroup, none of the runner's work;
#   - landlock: the runner re-executed as the helper with the config the runner computes
#     for that call, without cgroups or private temp directory.
# It prints the median over COUNT runs of each run's medians: the step, the reference, the
# gap (the median of the per-call differences), their ratio, and the CPU time the runner's
# own process spends per call against the reference's (less sensitive to a loaded
# machine than wall time), with the load average before and after.
# Aim (issue 12): a sandboxed step within 1.5 ms of bare bwrap around the same command.
#
# Environment: COUNT (default 5) runs; BENCHTIME (default 200x) calls per run and mode.
set -euo pipefail
cd "$(dirname "$0")/.."

COUNT=${COUNT:-5}
BENCHTIME=${BENCHTIME:-200x}
AIM_MS=1.5
out=$(mktemp "${TMPDIR:-/tmp}/bench-sandbox.XXXXXX")
trap 'rm -f "$out"' EXIT

load() { cut -d' ' -f1-3 /proc/loadavg; }
before=$(load)
printf 'bench-sandbox: go test -bench SandboxedStep -benchtime %s -count %s ./tools/exec/sandbox\n' "$BENCHTIME" "$COUNT" >&2
go test -run '^$' -bench 'SandboxedStep|RunInTerminal/none' -benchtime "$BENCHTIME" -count "$COUNT" \
  ./tools/exec/sandbox >"$out"
after=$(load)

# metric NAME UNIT -> the median of UNIT over the benchmark lines named NAME
metric() {
  awk -v name="$1" -v unit="$2" '$1 ~ "^" name "(-[0-9]+)?$" {
      for (i = 2; i < NF; i++) if ($(i + 1) == unit) v[n++] = $i
    }
    END {
      if (n == 0) { print "nan"; exit }
      for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
      print (n % 2) ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2
    }' "$out"
}

echo
echo "bench-sandbox: run_in_terminal of \`true\` against the same confinement started bare, median of $COUNT runs of $BENCHTIME"
echo "$(nproc) CPUs, $(go version | awk '{print $3}'), load average $before before, $after after"
echo
printf '%-9s %10s %10s %10s %7s %16s %16s\n' sandbox step bare gap ratio "runner CPU/step" "bare CPU/call"
modes=()
for mode in bwrap landlock; do
  grep -q "^BenchmarkSandboxedStep/$mode" "$out" || continue
  modes+=("$mode")
  awk -v m="$mode" -v s="$(metric "BenchmarkSandboxedStep/$mode" step-ms)" -v b="$(metric "BenchmarkSandboxedStep/$mode" bare-ms)" \
    -v g="$(metric "BenchmarkSandboxedStep/$mode" gap-ms)" -v r="$(metric "BenchmarkSandboxedStep/$mode" ratio)" \
    -v sc="$(metric "BenchmarkSandboxedStep/$mode" step-cpu-ms)" -v bc="$(metric "BenchmarkSandboxedStep/$mode" bare-cpu-ms)" \
    'BEGIN { printf "%-9s %7.2f ms %7.2f ms %7.2f ms %6.2fx %13.2f ms %13.2f ms\n", m, s, b, g, r, sc, bc }'
done
none=$(metric "BenchmarkRunInTerminal/none" ns/op)
awk -v n="$none" 'BEGIN { printf "(unsandboxed, for scale: %.2f ms per step)\n", n / 1e6 }'
echo
if [ ${#modes[@]} -eq 0 ]; then
  echo "No sandbox works here: nothing to compare."
  exit 0
fi
echo "Aim (gap under $AIM_MS ms):"
for mode in "${modes[@]}"; do
  g=$(metric "BenchmarkSandboxedStep/$mode" gap-ms)
  if awk -v g="$g" -v a="$AIM_MS" 'BEGIN { exit !(g < a) }'; then word="met    "; else word="NOT MET"; fi
  printf '  %s %s: %.2f ms\n' "$word" "$mode" "$g"
done
