#!/usr/bin/env bash
# scripts/dev.sh - set up and run intentgate on a fresh Debian 12 machine.
#
# Installs the missing Debian packages, builds a release build in
# build/release, and runs intentgate's main job on the sample intent in
# docs/examples/: prints its RFC 8785 canonical form and its intent hash,
# and creates a grant signing key in .intentgate-dev/keys on first run.
# (The PDP server, `intentgate serve --dev`, replaces this demo when it
# lands.)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh

ig_install_packages "${IG_RUNTIME_PACKAGES[@]}"

cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j"$(nproc)" --target intentgate >/dev/null

ig=build/release/cli/intentgate
sample=docs/examples/sample-intent.json
data=.intentgate-dev

echo "== intentgate canon $sample"
"$ig" canon "$sample"
echo
echo "== intentgate hash $sample"
"$ig" hash "$sample"
if [ ! -f "$data/keys/signing.key" ]; then
    echo "== intentgate keygen --out $data/keys"
    "$ig" keygen --out "$data/keys"
else
    echo "== signing key already in $data/keys (kept)"
fi
echo "== public key: $(cat "$data/keys/signing.pub")"
