#!/usr/bin/env bash
# run.sh BUILD_DIR - the approval pages in a real browser.
#
# Starts the dev-mode PDP of BUILD_DIR on a free loopback port and runs
# approve.mjs against it with Debian's chromium (CHROMIUM, default
# /usr/bin/chromium). Screenshots are kept in
# BUILD_DIR/tests/browser-artifacts/. The PDP must then stop cleanly
# (exit 0 on SIGTERM). Exit 0 only when everything passed.
#
# Nothing is downloaded here: the Node packages (playwright-core, pinned by
# package-lock.json) are installed before the suite runs by
# scripts/test.sh (ig_install_browser_modules in scripts/deps.sh). A
# missing node, chromium or node_modules fails the test with one line
# naming it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 1 ] || { echo "usage: run.sh BUILD_DIR" >&2; exit 2; }
missing() {
    echo "FAIL: ui.browser needs $*" >&2
    echo "browser: 0 passed, 1 failed"
    exit 1
}
command -v node >/dev/null 2>&1 ||
    missing "node, which is not installed (scripts/deps.sh installs it)"
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] ||
    missing "chromium, not found at ${CHROMIUM:-/usr/bin/chromium}" \
        "(scripts/deps.sh installs it)"
[ -f "$here/node_modules/playwright-core/package.json" ] ||
    missing "the Node package playwright-core in $here/node_modules;" \
        "install it with: npm ci --prefix $here (scripts/test.sh does)"
build=$(cd "$1" && pwd) || exit 2
ig=$build/cli/intentgate
artifacts=$build/tests/browser-artifacts
tmp=$(mktemp -d)
srv_pid=

cleanup() {
    if [ -n "$srv_pid" ]; then
        kill -TERM "$srv_pid" 2>/dev/null
        wait "$srv_pid" 2>/dev/null
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

fatal() {
    echo "FAIL: $*" >&2
    [ -s "$tmp/serve.log" ] && tail -20 "$tmp/serve.log" >&2
    echo "browser: 0 passed, 1 failed"
    exit 1
}

[ -x "$ig" ] || fatal "no intentgate binary at $ig"
rm -rf "$artifacts"
mkdir -p "$artifacts" || fatal "cannot create $artifacts"

# The dev PDP: dev.env names the URL once the port is known; the start log
# line ("server.started") comes after it is written.
"$ig" serve --dev --data "$tmp/data" --listen 127.0.0.1:0 \
    >"$tmp/serve.out" 2>"$tmp/serve.log" </dev/null &
srv_pid=$!
started=
for _ in $(seq 300); do
    kill -0 "$srv_pid" 2>/dev/null || fatal "the PDP exited at start"
    if grep -q '"server.started"' "$tmp/serve.log" &&
        grep -q '^INTENTGATE_URL=http' "$tmp/data/dev.env" 2>/dev/null; then
        started=1
        break
    fi
    sleep 0.1
done
[ -n "$started" ] || fatal "the PDP did not start in 30 s"
set -a
# shellcheck disable=SC1091
. "$tmp/data/dev.env"
set +a

IG_ARTIFACTS=$artifacts node "$here/approve.mjs"
rc=$?

kill -TERM "$srv_pid"
wait "$srv_pid"
srv_rc=$?
srv_pid=
cp "$tmp/serve.log" "$artifacts/serve.log" 2>/dev/null
if [ "$srv_rc" -ne 0 ]; then
    echo "FAIL: the PDP exited $srv_rc on SIGTERM" >&2
    tail -20 "$tmp/serve.log" >&2
    echo "browser: 0 passed, 1 failed"
    exit 1
fi
exit "$rc"
