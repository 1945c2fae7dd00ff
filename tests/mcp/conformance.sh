#!/usr/bin/env bash
# tests/mcp/conformance.sh URL OUTDIR [EXPECTED_FAILURES_YML] - run the MCP
# conformance suite (@modelcontextprotocol/conformance, pinned by
# tests/mcp/package-lock.json) against the Streamable HTTP server at URL:
# all 32 server scenarios (--suite all: the active 30 and the two pending,
# json-schema-2020-12 and server-sse-polling).
#
# The suite needs Node 22 (it imports fs.globSync): the node@22 package in
# tests/mcp/node_modules ships that binary, and its .bin directory goes
# first on PATH, so the suite's `#!/usr/bin/env node` finds it. Results go
# to OUTDIR/server-<scenario>-<timestamp>/checks.json; OUTDIR/summary.txt
# lists each scenario as PASS or FAIL (a scenario passes when none of its
# checks is a FAILURE or a WARNING, the baseline's rule). With a baseline
# the exit status is the suite's: 0 when exactly the listed scenarios
# fail. Without one, 0 only when every scenario passes.
#
# Nothing is downloaded here: scripts/test.sh installs the packages
# (ig_install_mcp_modules in scripts/deps.sh). A missing package fails
# with one line naming it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: conformance.sh URL OUTDIR [EXPECTED_FAILURES_YML]" >&2
    exit 2
fi
url=$1 out=$2 baseline=${3:-}
bin=$here/node_modules/.bin
for t in node conformance; do
    [ -x "$bin/$t" ] || {
        echo "FAIL: conformance.sh needs $bin/$t; install it with:" \
            "npm ci --prefix $here (scripts/test.sh does)" >&2
        exit 1
    }
done
PATH=$bin:$PATH
case $(node --version) in
v22.*) ;;
*)
    echo "FAIL: $bin/node is $(node --version), not Node 22" >&2
    exit 1
    ;;
esac
mkdir -p "$out" || exit 1
args=(server --url "$url" --suite all -o "$out")
[ -n "$baseline" ] && args+=(--expected-failures "$baseline")
conformance "${args[@]}" >"$out/conformance.log" 2>&1
rc=$?
# One line per scenario from its checks.json.
node -e '
    const fs = require("fs"), path = require("path");
    const out = process.argv[1], lines = [];
    for (const d of fs.readdirSync(out).sort()) {
        const f = path.join(out, d, "checks.json");
        if (!fs.existsSync(f)) continue;
        const name = d.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
        const checks = JSON.parse(fs.readFileSync(f, "utf8"));
        const bad = checks.filter(c => c.status === "FAILURE" ||
                                       c.status === "WARNING");
        lines.push((bad.length ? "FAIL " : "PASS ") + name +
            (bad.length ? "  (" + bad.map(c => c.id + ": " +
                (c.errorMessage || c.status)).join("; ") + ")" : ""));
    }
    const pass = lines.filter(l => l.startsWith("PASS")).length;
    lines.push("conformance: " + pass + " passed, " +
               (lines.length - pass) + " failed");
    fs.writeFileSync(path.join(out, "summary.txt"), lines.join("\n") + "\n");
' "$out"
cat "$out/summary.txt"
[ $rc -ne 0 ] && tail -30 "$out/conformance.log"
exit $rc
