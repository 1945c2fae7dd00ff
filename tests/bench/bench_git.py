#!/usr/bin/env python3
"""bench_git.py - what the git gateway adds to a push and a clone.

    INTENTGATE_BIN=build/bench/cli/intentgate \\
    INTENTGATE_EXECUTOR_BIN=build/bench/executor/intentgate-executor \\
    python3 tests/bench/bench_git.py [MEGABYTES [RUNS]]      (default 50, 3)

Builds a repository of MEGABYTES of incompressible files, then RUNS times,
alternating the order: pushes it into a fresh bare repository straight to
the upstream (real `git http-backend` behind a credential check,
tests/integration/git_upstream.py) and through the executor's gateway
(grant from the PDP, the example policies), and clones it both ways. Prints
the median wall time of each, the gateway's added time in percent (issue
15's target: at most 5 %), and the executor's peak RSS (VmHWM), which the
caps bound, not the repository's size. Both paths pay the same upstream;
only the gateway's hop differs. Not a test: figures go in the issue notes.
Needs root (the harness lays deployments out under /srv) and git.
"""
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import exec_harness as H  # noqa: E402
import git_upstream as G  # noqa: E402


def timed(fn):
    t0 = time.monotonic()
    fn()
    return time.monotonic() - t0


def vm_hwm_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def main():
    mb = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    H.require_binaries()
    res = H.Resources()
    try:
        lay = H.Layout(res, "clone")
        pdp = H.start_custom_pdp(res, lay.path("pdp"), prefixes=("git.",),
                                 allow_prefixes=("bench.",), bundle=True)
        cred = "ghp_" + H.rand(16)
        ups = [G.GitUpstream(res, lay.path("up%d" % i), cred)
               for i in range(2 * runs + 1)]
        registry = {"actions": {}, "git": {
            "r%d" % i: {"url": up.url, "credential": "c",
                        "credential_user": "x-access-token",
                        "max_push_bytes": (mb + 64) * 1024 * 1024,
                        "timeout_ms": 600000}
            for i, up in enumerate(ups)}}
        ex = H.ConfigExecutor(res, lay.path("executor"), pdp, registry,
                              credentials={"c": cred})
        env = G.git_env(lay.path("home"))
        src = lay.path("src")
        G.run_git(["init", "-q", "-b", "main", src], env=env)
        for i in range(mb):
            with open(os.path.join(src, "blob%03d" % i), "wb") as f:
                f.write(os.urandom(1024 * 1024))
        G.run_git(["add", "-A"], cwd=src, env=env)
        G.run_git(["commit", "-q", "-m", "50 MB"], cwd=src, env=env)
        direct = ["-c", "http.extraHeader=Authorization: " +
                  ups[0].auth_value()]

        def grant(action, alias, params):
            st, body, _ = pdp.submit(action, alias, params)
            if st != 201 or body.get("decision") != "ALLOW":
                raise SystemExit("no grant: %r" % (body,))
            return ["-c", "http.extraHeader=Authorization: Bearer " +
                    body["grant"]]

        ref = "HEAD:refs/heads/agent/bench"
        t = {"push direct": [], "push gateway": [], "clone direct": [],
             "clone gateway": []}
        for i in range(runs):
            a, b = ups[2 * i], ups[2 * i + 1]
            gw = "%s/git/r%d" % (ex.url(), 2 * i + 1)
            pushes = [("push direct", lambda: G.run_git(
                          direct + ["push", "-q", a.url, ref], cwd=src,
                          env=env, timeout=600)),
                      ("push gateway", lambda: G.run_git(
                          grant("git.push", "r%d" % (2 * i + 1),
                                {"refs": ["refs/heads/agent/bench"]}) +
                          ["push", "-q", gw, ref], cwd=src, env=env,
                          timeout=600))]
            clones = [("clone direct", lambda: G.run_git(
                          direct + ["clone", "-q", "--bare", a.url,
                                    lay.path("cd%d" % i)], env=env,
                          timeout=600)),
                      ("clone gateway", lambda: G.run_git(
                          grant("git.fetch", "r%d" % (2 * i + 1), {}) +
                          ["clone", "-q", "--bare", gw,
                           lay.path("cg%d" % i)], env=env, timeout=600))]
            if i % 2:
                pushes.reverse()
                clones.reverse()
            for name, fn in pushes + clones:
                t[name].append(timed(fn))
        med = {k: statistics.median(v) for k, v in t.items()}
        print("repository: %d MB, %d runs each, alternating" % (mb, runs))
        for k in t:
            print("%-14s median %6.2f s  (%s)" % (
                k, med[k], ", ".join("%.2f" % x for x in t[k])))
        for op in ("push", "clone"):
            d, g = med[op + " direct"], med[op + " gateway"]
            print("%s: the gateway adds %+.1f %% (target <= 5 %%)"
                  % (op, 100.0 * (g - d) / d))
        print("executor peak RSS: %.1f MB" % (vm_hwm_kb(ex.proc.pid) / 1024))
    finally:
        res.close()


if __name__ == "__main__":
    main()
