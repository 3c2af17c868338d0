#!/usr/bin/env bash
# bench-bench: what `runner bench` itself costs, against an instant fake model, so the
# figures are the runner's and not a model's.
#
#   ./scripts/bench-bench.sh          (from the repo root; `make bench` runs it)
#
# It builds runner and fakellm, starts fakellm in bench mode (every chat request answered
# at once with task_complete) serving three models, writes 20 one-step scenarios, and runs
#   runner bench --models ollama:a,ollama:b,ollama:c --repeat 5 (300 cells)
# RUNS times under /usr/bin/time -v, printing the median wall time and the peak RSS.
# Aim (issue 8): under 10 s and under 100 MB peak RSS on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
MODELS=3 SCENARIOS=20 REPEAT=5
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-bench.XXXXXX")
fake_pid=""
cleanup() {
  [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
say() { printf '%s\n' "$*" >&2; }

if [ ! -x /usr/bin/time ]; then
  say "bench-bench: /usr/bin/time is missing: installing the Debian package 'time'"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq time >/dev/null
fi

say "bench-bench: building runner and fakellm"
make --no-print-directory -s build BIN="$work/runner" # the binary as make and the releases build it
go build -o "$work/fakellm" ./runner/model/fakellm/cmd/fakellm

mkdir -p "$work/suite"
for i in $(seq -w 1 "$SCENARIOS"); do
  cat >"$work/suite/s$i.yaml" <<YAML
name: scenario-$i
prompt: Say you are done ($i).
tools: [read_file]
workspace:
  files: {notes.txt: "scenario $i\n"}
assert:
  - completed: true
YAML
done

cat >"$work/script.json" <<'JSON'
{"bench": true, "repeat": true,
 "models": {"a": ["completion", "tools"], "b": ["completion", "tools"], "c": ["completion", "tools"]},
 "replies": [{"tool_calls": [{"name": "task_complete", "args": {"summary": "done"}}]}]}
JSON
"$work/fakellm" "$work/script.json" >"$work/fake.url" 2>"$work/fake.log" &
fake_pid=$!
for _ in $(seq 100); do [ -s "$work/fake.url" ] && break; sleep 0.05; done
url=$(head -n1 "$work/fake.url")
[ -n "$url" ] || { say "fakellm did not start: $(cat "$work/fake.log")"; exit 1; }

cells=$((MODELS * SCENARIOS * REPEAT))
: >"$work/walls.txt"; : >"$work/rss.txt"
for run in $(seq "$RUNS"); do
  out="$work/out-$run"
  start=$(date +%s%N)
  if ! OLLAMA_HOST=$url /usr/bin/time -v -o "$work/time.txt" \
    "$work/runner" bench --models ollama:a,ollama:b,ollama:c --repeat "$REPEAT" -j "$(nproc)" \
    --cache-dir "" --out "$out" "$work/suite" >"$work/bench.log" 2>&1; then
    say "runner bench failed:"; cat "$work/bench.log" >&2; exit 1
  fi
  end=$(date +%s%N)
  # Every model's leaderboard row must read (100/100): all cells measured and passed.
  rows=$(grep -c "($((SCENARIOS * REPEAT))/$((SCENARIOS * REPEAT)))" "$out/bench.md" || true)
  [ "$rows" = "$MODELS" ] || { say "expected $MODELS models with every cell passed:"; cat "$out/bench.md" >&2; exit 1; }
  echo $(( (end - start) / 1000000 )) >>"$work/walls.txt"
  awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$work/time.txt" >>"$work/rss.txt"
  say "bench-bench: run $run: $(tail -n1 "$work/walls.txt") ms, $(tail -n1 "$work/rss.txt") KB"
done

wall_ms=$(sort -n "$work/walls.txt" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
rss_mb=$(sort -n "$work/rss.txt" | tail -n1 | awk '{printf "%.1f", $1 / 1024}')
echo
echo "bench-bench: runner bench, $MODELS models x $SCENARIOS scenarios x $REPEAT repeats = $cells cells against fakellm (bench mode), $(nproc) CPUs, median of $RUNS runs"
awk -v w="$wall_ms" -v c="$cells" 'BEGIN { printf "  wall time   %.2f s (%.1f ms per cell)\n", w / 1000, w / c }'
echo "  peak RSS    $rss_mb MB"
aim() { if awk -v v="$2" -v lim="$3" 'BEGIN { exit !(v < lim) }'; then echo "  met     $1: $2 $4 (aim < $3)"; else echo "  NOT MET $1: $2 $4 (aim < $3)"; fi; }
aim "wall time" "$(awk -v w="$wall_ms" 'BEGIN { printf "%.2f", w / 1000 }')" 10 s
aim "peak RSS" "$rss_mb" 100 MB
