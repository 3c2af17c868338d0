#!/usr/bin/env bash
# bench-loop: what the runner itself costs per agent step, against a zero-latency fake
# model (fakellm in bench mode), so the figures are the runner's and not a model's.
#
#   ./scripts/bench-loop.sh            (from the repo root; `make bench-loop` runs it)
#
# It prints, for --model openai:bench and ollama:bench and for two cheap tools (read_file
# of a small file, run_in_terminal `true`):
#   - the built binary running a 200-step scenario: total time, time per step, peak RSS
#     (/usr/bin/time -v), median of RUNS runs;
#   - the baseline: a bare loop making the same HTTP calls plus the tool's work
#     (BenchmarkBareLoop200Steps), and the runner's overhead per step over it;
#   - allocations per step and the fsync share (BenchmarkScenario200Steps, in-process);
#   - startup: `runner run` of a 1-step scenario (hyperfine if installed, else 20 runs).
# Aims (issue 3): overhead under 1 ms per step, peak RSS under 50 MB, startup under 15 ms,
# within 1.2x of the bare loop.
#
# Environment: RUNS (default 3) binary runs per row; BENCHTIME (default 3x) for go test.
set -euo pipefail
cd "$(dirname "$0")/.."

STEPS=200
RUNS=${RUNS:-3}
BENCHTIME=${BENCHTIME:-3x}
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-loop.XXXXXX")
fake_pids=()
cleanup() {
  for pid in "${fake_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

say() { printf '%s\n' "$*" >&2; }

# /usr/bin/time (not the shell keyword) reports the peak RSS.
if [ ! -x /usr/bin/time ]; then
  say "bench-loop: /usr/bin/time is missing: installing the Debian package 'time'"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq time >/dev/null
fi

say "bench-loop: building runner and fakellm"
make --no-print-directory -s build BIN="$work/runner" # the binary as make and the releases build it
go build -o "$work/fakellm" ./runner/model/fakellm/cmd/fakellm

# --- task files -------------------------------------------------------------------------
# The scenario never completes: it ends at max_steps, which `completed: false` allows, so
# it passes (exit 0) after exactly $STEPS steps.
for tool in read_file run_in_terminal; do
  cat >"$work/loop-$tool.yaml" <<EOF
name: loop-$tool
prompt: Call $tool again and again.
tools: [$tool]
max_steps: $STEPS
timeout: 10m
workspace:
  files: {small.txt: "a small file\nof two lines\n"}
assert:
  - completed: false
  - steps_at_most: $STEPS
EOF
done
cat >"$work/one-step.yaml" <<'EOF'
name: one-step
prompt: Say you are done.
tools: [read_file]
assert:
  - completed: true
reference:
  - task_complete: {summary: done}
EOF

# --- fake model servers, one per tool ---------------------------------------------------
declare -A fake_url
for tool in read_file run_in_terminal; do
  case $tool in
    read_file) args='{"path": "small.txt"}' ;;
    run_in_terminal) args='{"command": "true"}' ;;
  esac
  printf '{"bench": true, "repeat": true, "replies": [{"tool_calls": [{"name": "%s", "args": %s}]}]}\n' \
    "$tool" "$args" >"$work/script-$tool.json"
  "$work/fakellm" "$work/script-$tool.json" >"$work/fake-$tool.url" 2>"$work/fake-$tool.log" &
  fake_pids+=($!)
  for _ in $(seq 100); do [ -s "$work/fake-$tool.url" ] && break; sleep 0.05; done
  fake_url[$tool]=$(head -n1 "$work/fake-$tool.url")
  [ -n "${fake_url[$tool]}" ] || { say "fakellm did not start: $(cat "$work/fake-$tool.log")"; exit 1; }
done

now_ns() { date +%s%N; }

# run_binary API TOOL SANDBOX -> "wall_ms rss_kb" of one run
run_binary() {
  local api=$1 tool=$2 sandbox=$3 url=${fake_url[$2]} out="$work/out-$RANDOM"
  local start end
  start=$(now_ns)
  if ! OLLAMA_HOST=$url OPENAI_BASE_URL=$url/v1 OPENAI_API_KEY=bench \
    /usr/bin/time -v -o "$work/time.txt" \
    "$work/runner" run --model "$api:bench" --sandbox "$sandbox" -j 1 --out "$out" \
    "$work/loop-$tool.yaml" >"$work/run.log" 2>&1; then
    say "runner failed:"; cat "$work/run.log" >&2; exit 1
  fi
  end=$(now_ns)
  grep -q "passed *$STEPS steps" "$work/run.log" || { say "unexpected run:"; cat "$work/run.log" >&2; exit 1; }
  rm -rf "$out"
  echo "$(( (end - start) / 1000000 )) $(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$work/time.txt")"
}

# median of numbers on stdin
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# --- startup ----------------------------------------------------------------------------
startup_cmd="$work/runner run --sandbox none --out $work/out-startup $work/one-step.yaml"
if command -v hyperfine >/dev/null; then
  say "bench-loop: startup with hyperfine (20 runs)"
  hyperfine -N --warmup 3 --runs 20 --export-json "$work/startup.json" "$startup_cmd" >/dev/null 2>&1
  startup_ms=$(grep -o '"median": *[0-9.e-]*' "$work/startup.json" | head -n1 | awk -F: '{printf "%.1f", $2 * 1000}')
  startup_how="hyperfine, median of 20"
else
  say "bench-loop: startup with a loop of 20 runs (install the Debian package hyperfine for better figures)"
  for _ in $(seq 20); do
    s=$(now_ns); $startup_cmd >/dev/null 2>&1; e=$(now_ns)
    echo $(( (e - s) / 1000 ))
  done | median >"$work/startup.txt"
  startup_ms=$(awk '{printf "%.1f", $1 / 1000}' "$work/startup.txt")
  startup_how="shell loop, median of 20"
fi

# --- in-process benchmarks: baseline, allocations, fsync share ---------------------------
say "bench-loop: go test -bench (BENCHTIME=$BENCHTIME)"
go test -run '^$' -bench 'Scenario200Steps|BareLoop200Steps' -benchtime "$BENCHTIME" ./runner/scenario/ >"$work/bench.txt"
# metric NAME UNIT -> the value of UNIT on the benchmark line whose name starts with NAME
metric() {
  awk -v name="$1" -v unit="$2" 'index($1, name) == 1 { for (i = 2; i <= NF; i++) if ($i == unit) { print $(i - 1); exit } }' "$work/bench.txt"
}

# --- the binary, end to end -------------------------------------------------------------
say "bench-loop: the binary, $RUNS runs per row"
rows=()
worst_overhead=0 worst_rss=0 worst_ratio=0
for api in openai ollama; do
  for tool in read_file run_in_terminal; do
    : >"$work/walls.txt"; : >"$work/rss.txt"
    for _ in $(seq "$RUNS"); do
      read -r wall rss < <(run_binary "$api" "$tool" none)
      echo "$wall" >>"$work/walls.txt"; echo "$rss" >>"$work/rss.txt"
    done
    wall=$(median <"$work/walls.txt")
    rss=$(sort -n "$work/rss.txt" | tail -n1)
    bare_ns=$(metric "BenchmarkBareLoop200Steps/$tool/$api" ns/step)
    row=$(awk -v wall="$wall" -v rss="$rss" -v bare="$bare_ns" -v st="$startup_ms" -v steps="$STEPS" \
      -v api="$api" -v tool="$tool" 'BEGIN {
        per = wall / steps; b = bare / 1e6; over = (wall - st) / steps - b
        printf "%-7s %-16s %8.2f s %9.3f ms %9.3f ms %9.3f ms %7.1fx %8.1f MB", api, tool, wall / 1000, per, b, over, per / b, rss / 1024
      }')
    rows+=("$row")
    read -r over ratio mb < <(awk -v wall="$wall" -v rss="$rss" -v bare="$bare_ns" -v st="$startup_ms" -v steps="$STEPS" \
      'BEGIN { b = bare / 1e6; printf "%.3f %.2f %.1f\n", (wall - st) / steps - b, wall / steps / b, rss / 1024 }')
    worst_overhead=$(awk -v a="$worst_overhead" -v b="$over" 'BEGIN { print (b > a) ? b : a }')
    # The 1.2x aim compares with "an HTTP call plus sh -c": the command rows.
    if [ "$tool" = run_in_terminal ]; then
      worst_ratio=$(awk -v a="$worst_ratio" -v b="$ratio" 'BEGIN { print (b > a) ? b : a }')
    fi
    worst_rss=$(awk -v a="$worst_rss" -v b="$mb" 'BEGIN { print (b > a) ? b : a }')
  done
done
# The same command step under the sandbox the machine offers, for scale.
read -r sb_wall _ < <(run_binary openai run_in_terminal auto)
sb_name=$(grep -i sandbox "$work/run.log" | grep -oE '\b(bwrap|landlock)\b' | head -n1 || true)

# --- report -----------------------------------------------------------------------------
echo
echo "bench-loop: $STEPS-step scenario against fakellm (bench mode), $(nproc) CPUs, $(go version | awk '{print $3}')"
echo
echo "The binary, --sandbox none, median of $RUNS runs (overhead = (total - startup)/steps - bare):"
printf '%-7s %-16s %10s %12s %12s %12s %8s %11s\n' model tool total per-step bare/step overhead ratio "peak RSS"
for r in "${rows[@]}"; do echo "$r"; done
awk -v w="$sb_wall" -v s="$STEPS" -v n="${sb_name:-unsandboxed}" 'BEGIN { printf "openai  run_in_terminal with --sandbox auto (%s): %.2f s, %.3f ms per step\n", n, w / 1000, w / s }'
echo
echo "In process (BenchmarkScenario200Steps; allocations include the in-process fake's handler):"
printf '%-34s %12s %12s %12s %12s\n' scenario "ns/step" "fsync/step" "allocs/step" "B/step"
for tool in read_file run_in_terminal; do
  for api in openai ollama; do
    with=$(metric "BenchmarkScenario200Steps/$tool/$api/fsync=true" ns/step)
    without=$(metric "BenchmarkScenario200Steps/$tool/$api/fsync=false" ns/step)
    allocs=$(metric "BenchmarkScenario200Steps/$tool/$api/fsync=true" allocs/step)
    bytes=$(metric "BenchmarkScenario200Steps/$tool/$api/fsync=true" B/step)
    awk -v n="$tool/$api" -v w="$with" -v wo="$without" -v a="$allocs" -v by="$bytes" \
      'BEGIN { printf "%-34s %9.3f ms %9.3f ms %12.0f %9.1f KB\n", n, w / 1e6, (w - wo) / 1e6, a, by / 1024 }'
  done
done
for tool in read_file run_in_terminal; do
  for api in openai ollama; do
    awk -v n="bare loop $tool/$api" -v w="$(metric "BenchmarkBareLoop200Steps/$tool/$api" ns/step)" \
      -v a="$(metric "BenchmarkBareLoop200Steps/$tool/$api" allocs/step)" -v by="$(metric "BenchmarkBareLoop200Steps/$tool/$api" B/step)" \
      'BEGIN { printf "%-34s %9.3f ms %12s %12.0f %9.1f KB\n", n, w / 1e6, "-", a, by / 1024 }'
  done
done
echo
echo "Startup, runner run of a 1-step oracle scenario ($startup_how): $startup_ms ms"
echo
aim() { if awk -v v="$2" -v lim="$3" 'BEGIN { exit !(v < lim) }'; then echo "  met     $1: $2 $4 (aim < $3)"; else echo "  NOT MET $1: $2 $4 (aim < $3)"; fi; }
echo "Aims (worst row):"
aim "runner overhead per step" "$worst_overhead" 1 ms
aim "peak RSS" "$worst_rss" 50 MB
aim "startup" "$startup_ms" 15 ms
aim "run_in_terminal step time over the bare loop" "$worst_ratio" 1.2 x
