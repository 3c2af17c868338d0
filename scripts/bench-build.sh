#!/usr/bin/env bash
# bench-build: what a newcomer's first build costs, and a start-up, against a base commit,
# measured side by side in one run so machine load hits both alike (issue 19: a cold build
# at most 0.75x of f9bf473's, start-up no worse).
# - cold build: `go build` of the binary with an empty GOCACHE (modules already downloaded:
#   the proxy's speed is not ours), base and head alternated ROUNDS times;
# - packages linked: go list -deps of the binary;
# - start-up: `runner --version` (process start, package init, flag parsing), RUNS times
#   each, alternated in blocks of 20.
#
#   ./scripts/bench-build.sh [BASE]     (`make bench-build`; default BASE f9bf473; ROUNDS=2, RUNS=400)
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${1:-f9bf473}
ROUNDS=${ROUNDS:-2}
RUNS=${RUNS:-400}
tags=urfave_cli_no_docs
work=$(mktemp -d)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add --detach "$work/base" "$BASE" >/dev/null 2>&1
(cd "$work/base" && go mod download)
before=$(cut -d' ' -f1-3 /proc/loadavg)

add() { awk -v a="$1" -v b="$2" 'BEGIN { print a + b }'; }

cold() { # dir -> seconds of a cold build
	local cache
	cache=$(mktemp -d "$work/cache.XXXX")
	local t0 t1
	t0=$(date +%s.%N)
	(cd "$1" && GOCACHE=$cache CGO_ENABLED=0 go build -tags=$tags -o "$work/$2" .)
	t1=$(date +%s.%N)
	rm -rf "$cache"
	awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}
base_t=0 head_t=0
for r in $(seq "$ROUNDS"); do
	b=$(cold "$work/base" runner-base); h=$(cold . runner-head)
	echo "round $r: cold build base ${b}s, head ${h}s" >&2
	base_t=$(add "$base_t" "$b"); head_t=$(add "$head_t" "$h")
done
deps() { (cd "$1" && go list -deps -tags=$tags . | wc -l); }

startup() { # binary -> total seconds for 20 runs
	local t0 t1
	t0=$(date +%s.%N)
	for _ in $(seq 20); do "$1" --version >/dev/null; done
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}
sb=0 sh=0
for _ in $(seq $((RUNS / 20))); do
	sb=$(add "$sb" "$(startup "$work/runner-base")")
	sh=$(add "$sh" "$(startup "$work/runner-head")")
done
awk -v b="$base_t" -v h="$head_t" -v r="$ROUNDS" -v db="$(deps "$work/base")" -v dh="$(deps .)" \
	-v sb="$sb" -v sh="$sh" -v n="$RUNS" -v base="$BASE" -v head="$(git rev-parse --short HEAD)" \
	-v load="$before -> $(cut -d' ' -f1-3 /proc/loadavg)" 'BEGIN {
	printf "\n%-28s %12s %12s %8s\n", "", "base " base, "head " head, "ratio"
	printf "%-28s %12.1f %12.1f %7.2fx\n", "cold build (s, mean)", b / r, h / r, h / b
	printf "%-28s %12d %12d %7.2fx\n", "packages linked", db, dh, dh / db
	printf "%-28s %12.2f %12.2f %7.2fx\n", "start-up --version (ms)", sb * 1000 / n, sh * 1000 / n, sh / sb
	printf "load average %s\n", load
}'
