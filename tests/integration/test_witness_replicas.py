"""test_witness_replicas.py - the witness client on PostgreSQL replicas:
only the replica that sequences the log (the one that signs checkpoints)
submits them, so a witness is never sent stale or duplicate requests by
the others; every replica serves the cosignatures from the shared
database; only the sequencer shows the witness metrics. Needs the cluster
at IG_TEST_PG_URL (without it the test fails, it never skips).

    IG_TEST_PG_URL=postgresql://... INTENTGATE_BIN=build/release/cli/intentgate \\
        python3 tests/integration/test_witness_replicas.py
"""
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pg  # noqa: E402
from harness import Server, run_tests, wait_until  # noqa: E402
from fake_witness import FakeWitness  # noqa: E402
from test_witness_client import (checkpoint, checkpoint_size,  # noqa: E402
                                 metrics, section)


def submissions(srv):
    """The witness.* events of srv's log that follow a request it sent."""
    out = []
    for line in srv.log().split("\n"):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("event", "").startswith("witness.") and \
                rec["event"] != "witness.started":
            out.append(rec)
    return out


class Replicas(unittest.TestCase):
    def setUp(self):
        self.database = pg.create_database("igwit")
        boot = Server.dev(database=self.database)
        self.tmp = boot.tmp
        self.env = {k: v for k, v in boot.env.items()
                    if k != "INTENTGATE_URL"}
        self.assertEqual(boot.stop(), 0, boot.log()[-4000:])
        self.fake = FakeWitness(self.tmp, "w1", "honest")
        self.conf = os.path.join(boot.data, "intentgate.conf")
        with open(self.conf) as f:
            text = f.read()
        with open(self.conf, "w") as f:
            f.write(text.replace("[audit]\n", "[audit]\ncheckpoint_every = 5\n")
                    + "\n" + section(self.fake))
        self.servers = []
        for _ in range(2):
            tmp = tempfile.mkdtemp(prefix="replica-", dir=self.tmp)
            self.servers.append(Server.custom(self.conf, tmp, self.env,
                                              database=self.database))

    def tearDown(self):
        problems = []
        for s in self.servers:
            rc = s.stop()
            log = s.log()
            if rc != 0 or "Sanitizer" in log or "runtime error" in log:
                problems.append("exit %s:\n%s" % (rc, log[-4000:]))
        self.fake.close()
        shutil.rmtree(self.tmp, ignore_errors=True)
        pg.drop_database(self.database)
        if problems:
            raise AssertionError("\n".join(problems))

    def test_only_the_sequencer_submits(self):
        for i in range(20):
            srv = self.servers[i % 2]
            st, body, _ = srv.submit("payments.refund", "orders/r%d" % i,
                                     {"amount": 1})
            self.assertIn(st, (200, 201), body)

        def cosigned_everywhere():
            notes = [checkpoint(s) for s in self.servers]
            return all(self.fake.name in n for n in notes) and \
                checkpoint_size(notes[0]) == self.fake.size and notes
        wait_until(cosigned_everywhere,
                   "the latest checkpoint cosigned, served by both", 60)
        subs = [submissions(s) for s in self.servers]
        active = [i for i in (0, 1) if subs[i]]
        self.assertEqual(len(active), 1, subs)
        self.assertTrue(all(e["event"] == "witness.cosigned"
                            for e in subs[active[0]]), subs)
        # Never a request from a stale size: the witness answered no 409.
        with self.fake.lock:
            olds = [r[0] for r in self.fake.requests]
        self.assertEqual(olds, sorted(olds))
        self.assertEqual(len(set(olds)), len(olds), olds)
        # Only the sequencer shows the witness metrics.
        m = [metrics(s) for s in self.servers]
        self.assertEqual(m[active[0]][
            ("intentgate_witness_cosigned_size", "w1", None)], self.fake.size)
        self.assertEqual(m[1 - active[0]], {})


if __name__ == "__main__":
    run_tests()
