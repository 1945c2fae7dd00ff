#!/usr/bin/env bash
# scripts/dev.sh - set up and run intentgate on a fresh Debian 12 machine.
#
# Installs the missing Debian packages, builds a release build in
# build/release, and runs intentgate's main job: the policy decision point
# in dev mode, on the embedded SQLite default with the example policies.
# The first run creates .intentgate-dev/ (signing key, example policies,
# agent/executor/admin tokens, SQLite database); later runs keep it.
# It prints .intentgate-dev/dev.env - the URL and tokens - then serves on
# 127.0.0.1:8700 (INTENTGATE_LISTEN to change) until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh

ig_install_packages "${IG_RUNTIME_PACKAGES[@]}"

cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DIG_TEST_CLOCK=OFF >/dev/null
cmake --build build/release -j"$(nproc)" --target intentgate intentgate-executor \
    >/dev/null

exec build/release/cli/intentgate serve --dev --data .intentgate-dev \
    --listen "${INTENTGATE_LISTEN:-127.0.0.1:8700}"
