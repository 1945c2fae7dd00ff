"""test_examples.py - run the integration examples in docs/examples/
(curl.sh, client.py, client.mjs) against a dev PDP, the dev executor and
a fake upstream: ALLOW, BLOCK, an ESCALATE an approver approves through
the API while the example long-polls, one nobody decides, an execution,
and the error exits. Each example must keep the `intentgate submit` exit
contract (0 allow, 2 error, 3 pending, 4 block, 5 not run).

    INTENTGATE_BIN=... INTENTGATE_EXECUTOR_BIN=... IG_NODE=node IG_CURL=curl \\
        python3 tests/cli/test_examples.py docs/examples
"""
import json
import os
import shutil
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_harness import Stack, Tally, parse, run  # noqa: E402

T = Tally()


def examples(folder):
    """(name, argv prefix) for each example; an example whose runtime is
    not installed is a failure naming it, never a skip."""
    out = []
    curl, node = (shutil.which(os.environ.get(var) or name)
                  for var, name in (("IG_CURL", "curl"), ("IG_NODE", "node")))
    if curl and shutil.which("bash"):
        out.append(("curl.sh", ["bash", os.path.join(folder, "curl.sh")]))
    else:
        T.check("curl.sh: bash and curl are installed", False,
                "agent.examples needs bash and curl (scripts/deps.sh)")
    out.append(("client.py", [sys.executable,
                              os.path.join(folder, "client.py")]))
    if node:
        out.append(("client.mjs", [node, os.path.join(folder, "client.mjs")]))
    else:
        T.check("client.mjs: node is installed", False,
                "agent.examples needs node (scripts/deps.sh)")
    return out


def refund(amount, order):
    return json.dumps({"amount": amount, "currency": "EUR",
                       "order_id": order})


def check_example(s, name, argv, n):
    base = {k: v for k, v in s.env.items() if k != "INTENTGATE_EXECUTOR_URL"}
    base["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")

    def ex(env, resource, params, timeout=60):
        return run(argv + ["payments.refund", resource, params], env,
                   timeout)

    rc, out, err = ex(base, "orders/%d-a" % n, refund(42, "o1"))
    a = parse(out)
    T.check(name + ": ALLOW exits 0 with the grant",
            rc == 0 and a is not None and a["decision"] == "ALLOW" and
            a["grant"].startswith("v4.public."),
            "rc=%d %s %s" % (rc, out[:300], err))

    rc, out, err = ex(base, "orders/%d-b" % n, refund(5000, "o2"))
    a = parse(out)
    T.check(name + ": BLOCK exits 4 with the reasons",
            rc == 4 and a is not None and a["decision"] == "BLOCK" and
            a["reasons"] == ["AMOUNT_OVER_LIMIT"],
            "rc=%d %s %s" % (rc, out[:300], err))

    resource = "orders/%d-c" % n
    t = s.approve_in_background(resource)
    rc, out, err = ex(dict(base, INTENTGATE_WAIT="30"), resource,
                      refund(500, "o3"))
    t.join()
    a = parse(out)
    T.check(name + ": ESCALATE approved while it waits exits 0 with the grant",
            rc == 0 and t.error is None and a is not None and
            a["state"] == "ALLOWED" and a["grant"].startswith("v4.public."),
            "rc=%d approver=%s %s %s" % (rc, t.error, out[:300], err))

    rc, out, err = ex(dict(base, INTENTGATE_WAIT="1"), "orders/%d-d" % n,
                      refund(500, "o4"))
    a = parse(out)
    T.check(name + ": ESCALATE nobody decides exits 3",
            rc == 3 and a is not None and a["state"] == "PENDING_APPROVAL",
            "rc=%d %s %s" % (rc, out[:300], err))

    before = len(s.upstream.seen)
    rc, out, err = ex(s.env, "orders/%d-e" % n, refund(7, "o5"))
    a = parse(out)
    T.check(name + ": with the executor: COMPLETED, one upstream call",
            rc == 0 and a is not None and a["outcome"] == "COMPLETED" and
            len(s.upstream.seen) == before + 1,
            "rc=%d %s %s" % (rc, out[:300], err))

    rc, out, err = ex({k: v for k, v in base.items()
                       if k != "INTENTGATE_TOKEN"}, "orders/1", "{}")
    T.check(name + ": no INTENTGATE_TOKEN exits 2", rc == 2, err)
    rc, out, err = ex(dict(base, INTENTGATE_URL="http://127.0.0.1:1"),
                      "orders/1", "{}")
    T.check(name + ": unreachable PDP exits 2", rc == 2, err)
    rc, out, err = ex(dict(base, INTENTGATE_TOKEN="igt_wrong"), "orders/1",
                      "{}")
    T.check(name + ": a refused token exits 2", rc == 2, err)


def main(argv):
    folder = argv[1] if len(argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
        "examples")
    s = Stack.start(executor=True)
    try:
        for n, (name, prefix) in enumerate(examples(folder)):
            T.run(name, lambda: check_example(s, name, prefix, n))
    finally:
        T.run("servers exit 0",
              lambda: (s.finish(), T.check("servers exit 0", True)))
    return T.done()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
