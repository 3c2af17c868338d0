#!/usr/bin/env bash
# build-server: the real Ollama server, built on CPU from the module runner's go.mod already
# requires, once per version, into the user's cache. Prints the binary's path.
#
#   tests/ollama/build-server.sh            (make e2e-ollama and make bench-ollama call it)
#
# Why from the module: the only sources reachable here are the Go module proxy and Debian apt,
# and the module zip has everything but its vendor/ folders (module zips drop them). Those come
# from Debian (nlohmann-json3-dev, libstb-dev; found on the system include path) and, for
# miniaudio.h, from the Go module github.com/gen2brain/malgo. cgo with g++ builds the CPU
# backend without cmake: 10-20 min cold on 2 cores, ~76 MB; later calls print the cached path.
# Ollama's code is never copied into this repository.
#
# Environment: OLLAMA_SERVER_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/runner/ollama-server),
# OLLAMA_VERSION (default: the version in go.mod).
set -euo pipefail
cd "$(dirname "$0")/../.."

MALGO=github.com/gen2brain/malgo@v0.11.24
version=${OLLAMA_VERSION:-$(go list -m -f '{{.Version}}' github.com/ollama/ollama)}
cache=${OLLAMA_SERVER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/runner/ollama-server}/$version
bin=$cache/ollama
mkdir -p "$cache"

# One build at a time per version: a second caller waits, then finds the binary.
exec 9>"$cache/.lock"
flock 9
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi

for h in nlohmann/json.hpp stb/stb_image.h; do
  if ! echo "#include <$h>" | g++ -x c++ -fsyntax-only - 2>/dev/null; then
    echo "build-server: <$h> missing: apt-get install g++ nlohmann-json3-dev libstb-dev" >&2
    exit 1
  fi
done

# Outside any module (GOWORK off, GOFLAGS cleared of runner's build tags) so that go mod
# download fetches exactly version@proxy and touches no go.mod.
export GOWORK=off GOFLAGS=-buildvcs=false
moddir() { (cd "$cache" && go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'); }
src_mod=$(moddir "github.com/ollama/ollama@$version")
malgo=$(moddir "$MALGO")
[ -d "$src_mod" ] && [ -f "$malgo/miniaudio.h" ] || { echo "build-server: go mod download failed" >&2; exit 1; }

src=$cache/src
rm -rf "$src"
cp -r "$src_mod" "$src"
chmod -R u+w "$src"
mkdir -p "$src/llama/llama.cpp/vendor/miniaudio"
cp "$malgo/miniaudio.h" "$src/llama/llama.cpp/vendor/miniaudio/"

echo "build-server: building Ollama $version in $src (10-20 min cold on 2 cores)" >&2
start=$(date +%s)
(cd "$src" && CGO_ENABLED=1 CC=gcc CXX=g++ nice -n 10 go build -trimpath \
  -ldflags "-X github.com/ollama/ollama/version.Version=${version#v}" -o "$bin.tmp" .)
mv "$bin.tmp" "$bin"
rm -rf "$src"
echo "build-server: built in $(( $(date +%s) - start )) s: $bin" >&2
echo "$bin"
