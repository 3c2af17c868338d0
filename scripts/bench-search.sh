#!/usr/bin/env bash
# bench-search.sh compares grep_search and file_search (tools/search) with ripgrep and fd
# on the Go source tree, running each query as a process (startup included, output to a
# pipe) alternately with the other tool, and prints median wall-clock times and the ratio.
#
#   scripts/bench-search.sh            # RUNS=9 runs of each, corpus $(go env GOROOT)/src
#   RUNS=21 SRC=/some/tree scripts/bench-search.sh
#
# Flags make the semantics match ours: --hidden (we search hidden files, except .git),
# --no-require-git (we apply .gitignore without a git repository), -n --no-heading for
# "path:line:" output, -s / -i for the case mode; fd -H -s -t f -g matches file names by a
# case-sensitive glob, as a slash-free pattern does for file_search. Both skip binary files
# and ignored paths. Queries have fewer matches than our result caps, so both sides do the
# same work, except where a line says otherwise. grep_search has no count-only mode, so
# there is no row against rg -c.
#
# The goal is a ratio of at most 1.05 on the like-for-like rows. Each ratio is of medians
# taken in the same run, the two commands alternating, so that load from other processes
# falls on both; on a shared machine compare ratios, not times, over RUNS=21 or more, and
# note the load average printed below.
set -euo pipefail

cd "$(dirname "$0")/.."
RUNS=${RUNS:-9}
SRC=${SRC:-$(go env GOROOT)/src}

command -v rg >/dev/null || { echo "ripgrep not found: apt-get install -y ripgrep" >&2; exit 1; }
FD=$(command -v fdfind || command -v fd || true)
[ -n "$FD" ] || { echo "fd not found: apt-get install -y fd-find" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/benchcmd" ./tools/search/internal/benchcmd
make --no-print-directory -s build BIN="$tmp/runner" # the binary as make and the releases build it

echo "corpus: $SRC ($(find "$SRC" -type f | wc -l) files); $RUNS runs each; $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$(rg --version | sed -n 1p); $("$FD" --version)"

compare() { "$tmp/benchcmd" compare -dir "$SRC" -n "$RUNS" "$@"; }
RG=(rg -n --no-heading --hidden --no-require-git)

compare -name "grep literal -i 'deprecated'" \
	grep_search '{"pattern":"deprecated","max_results":1000}' -- "${RG[@]}" -i 'deprecated' .
compare -name "grep literal -s 'Deprecated'" \
	grep_search '{"pattern":"Deprecated","case_sensitive":true,"max_results":1000}' -- "${RG[@]}" -s 'Deprecated' .
compare -name "grep regex 'func \\w+Handler'" \
	grep_search '{"pattern":"func \\w+Handler","is_regex":true,"case_sensitive":true,"max_results":1000}' -- "${RG[@]}" -s 'func \w+Handler' .
compare -name "grep literal -i 'func main', early stop at max_results 100 (rg finds all)" \
	grep_search '{"pattern":"func main"}' -- "${RG[@]}" -i 'func main' .
compare -name "file_search '**/*_test.go' (lists 1000, counts all)" \
	file_search '{"pattern":"**/*_test.go"}' -- "$FD" -H -s -t f -g '*_test.go'
compare -name "file_search '**/*.s'" \
	file_search '{"pattern":"**/*.s"}' -- "$FD" -H -s -t f -g '*.s'
# The same query as a whole `runner tool` call: the CLI's start-up, the sandbox probe and
# the JSON result included, as a user or script running one tool call pays them.
compare -name "runner tool grep_search -s 'Deprecated' (whole CLI call)" -runner "$tmp/runner" \
	grep_search '{"pattern":"Deprecated","case_sensitive":true,"max_results":1000}' -- "${RG[@]}" -s 'Deprecated' .
