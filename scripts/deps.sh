# scripts/deps.sh - sourced by dev.sh and test.sh: install the Debian 12
# packages intentgate needs, only those that are missing, non-interactively.
#
#   ig_install_packages PKG...
#
# Runs apt-get as root, through sudo when not root. Prints what it installs.

ig_install_packages() {
    local missing=() p
    for p in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
            grep -q 'install ok installed'; then
            missing+=("$p")
        fi
    done
    [ ${#missing[@]} -eq 0 ] && return 0

    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "intentgate: need root to install: ${missing[*]}" >&2
            echo "intentgate: run this script as root, or install sudo" >&2
            return 1
        fi
        sudo=(sudo)
    fi
    echo "intentgate: installing ${missing[*]}" >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq --no-install-recommends "${missing[@]}" \
            >/dev/null
}

# What building and running intentgate needs.
IG_RUNTIME_PACKAGES=(build-essential cmake pkg-config
    libsodium-dev libjansson-dev libcmocka-dev liblua5.4-dev
    libsqlite3-dev libmicrohttpd-dev libcurl4-openssl-dev libssl-dev
    libpq-dev)

# What the whole test suite needs on top: clang for the fuzzers,
# clang-format 14 for the style check, python3 for the integration tests,
# openssl and python3-cryptography (Ed25519) for their independent
# signature checks,
# bubblewrap for the executor's sandbox, curl for the CLI tests, git for
# `intentgate git`'s tests (and its `git http-backend`), chromium
# (and a font) for the approval pages' browser test. That test drives
# chromium with npm's playwright-core, so it needs node and npm too:
# Debian's are used only when none is installed (a NodeSource node ships
# its own npm, which Debian's npm package would conflict with). The
# install test (tests/ci/test_install.sh) renders the man pages with man-db
# and groff and reads the binaries' hardening with binutils' readelf.
# PostgreSQL 15 (Debian 12's server, with its psql) runs the throwaway
# cluster the suites run against a second time, on the PostgreSQL store
# (scripts/pg-cluster.sh; its package starts no cluster of its own in a
# container, and the test cluster picks a free port besides).
IG_TEST_PACKAGES=(clang libclang-rt-14-dev clang-format python3 openssl
    python3-cryptography
    bubblewrap curl git chromium fonts-dejavu-core man-db groff-base binutils
    postgresql-15)
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    IG_TEST_PACKAGES+=(nodejs npm)
fi

# A test folder's Node packages (DIR/node_modules), exactly as
# DIR/package-lock.json pins them, installed with `npm ci` when they are
# missing or any of package.json's dependencies differs from the lockfile.
# This runs before ctest: no test reaches the network (the tests only check
# that the packages are there). WHAT names the folder's user in the
# message.
#
#   ig_install_node_modules DIR WHAT
ig_install_node_modules() {
    local dir=$1 what=$2
    if node -e '
        const d = process.argv[1];
        const lock = require(d + "/package-lock.json").packages;
        const deps = require(d + "/package.json").dependencies || {};
        for (const name of Object.keys(deps)) {
            const want = lock["node_modules/" + name].version;
            const have = require(d + "/node_modules/" + name +
                "/package.json").version;
            if (want !== have) process.exit(1);
        }' "$(cd "$dir" && pwd)" 2>/dev/null; then
        return 0
    fi
    echo "intentgate: installing the $what's Node packages" \
        "(npm ci in $dir)" >&2
    npm ci --prefix "$dir" --no-audit --no-fund >&2
}

# The browser test's packages (playwright-core), pinned by
# tests/browser/package-lock.json.
#
#   ig_install_browser_modules [DIR]     (default tests/browser)
ig_install_browser_modules() {
    ig_install_node_modules "${1:-tests/browser}" "browser test"
}

# The MCP tests' packages, pinned by tests/mcp/package-lock.json: the SDK
# (tests/mcp/client.mjs), the reference servers server-everything and
# server-filesystem, the conformance suite and the Node 22 binary it needs
# (the npm package node@22; Debian's node is older).
#
#   ig_install_mcp_modules [DIR]         (default tests/mcp)
ig_install_mcp_modules() {
    ig_install_node_modules "${1:-tests/mcp}" "MCP tests"
}
