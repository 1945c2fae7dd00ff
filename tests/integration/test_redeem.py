"""test_redeem.py - the PDP's redeem takes only the token it issued.

The PDP signs a grant and stores its token with the intent; a redemption
compares the presented token with the stored one (constant time) instead
of checking the signature again, and holds the stored token and row to
every claim check: its key still trusted, this executor, not expired
(test clock), this intent, once. These are the attacks on that shortcut;
each must be refused with the grant left unspent, and the real token must
still redeem afterwards (so a refusal is never the only thing that can
happen).

    INTENTGATE_BIN=build/cli/intentgate python3 tests/integration/test_redeem.py
"""
import base64
import json
import os
import subprocess
import sys
import unittest

from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, Server, run_tests  # noqa: E402
from test_pdp import CustomServer  # noqa: E402

HDR = "v4.public."


def b64d(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def b64e(b):
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


def pae(*pieces):
    out = len(pieces).to_bytes(8, "little")
    for p in pieces:
        out += len(p).to_bytes(8, "little") + p
    return out


def split(token):
    """(payload, signature, footer) of a v4.public token."""
    rest = token[len(HDR):].split(".")
    body = b64d(rest[0])
    return body[:-64], body[-64:], b64d(rest[1]) if len(rest) > 1 else b""


def sign(secret_file, payload, footer, implicit):
    """A v4.public token signed with the k4.secret key in secret_file."""
    with open(secret_file) as f:
        raw = b64d(f.read().strip()[len("k4.secret."):])
    key = Ed25519PrivateKey.from_private_bytes(raw[:32])
    sig = key.sign(pae(HDR.encode(), payload, footer, implicit))
    return HDR + b64e(payload + sig) + "." + b64e(footer)


def keygen(out):
    """A new key pair in out/; its kid."""
    r = subprocess.run([BIN, "keygen", "--out", out], check=True,
                       capture_output=True, text=True)
    return r.stdout.strip().splitlines()[-1]


class Redeem(CustomServer):
    clock = True

    def setUp(self):
        super().setUp()
        self.other_kid = keygen(os.path.join(self.tmp, "other"))

    def allow(self, amount):
        st, b, _ = self.srv.submit("payments.refund", "orders/%d" % amount,
                                   {"amount": amount})
        self.assertEqual((st, b.get("decision")), (201, "ALLOW"), b)
        return b["grant"], b["intent_id"]

    def state(self, iid):
        st, rec, _ = self.srv.call("GET", "/v1/intents/" + iid,
                                   self.env["INTENTGATE_ADMIN_TOKEN"])
        self.assertEqual(st, 200, rec)
        return rec["state"]

    def refused(self, token, iid, status=403, code="GRANT_INVALID",
                who=None):
        st, b, _ = self.srv.redeem(token, iid, who)
        self.assertEqual((st, b.get("error", {}).get("code")),
                         (status, code), (token[:60], b))

    def restart(self, conf_edit):
        """Stop, edit the config file, start again on the same data."""
        self.assertEqual(self.srv.stop(), 0, self.srv.log()[-2000:])
        path = os.path.join(self.tmp, "ig.conf")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(conf_edit(text))
        # custom() reads the port from the log's start line: a fresh log.
        os.replace(self.srv.log_path, self.srv.log_path + ".old")
        env = {k: v for k, v in self.env.items() if k != "INTENTGATE_URL"}
        self.srv = Server.custom(path, self.tmp, env, clock=self.clock)
        self.env = self.srv.env

    def test_only_the_issued_token_redeems(self):
        grant, iid = self.allow(10)
        payload, sig, footer = split(grant)
        claims = json.loads(payload)
        implicit = claims["intent_hash"].encode()
        kid = json.loads(footer)["kid"]
        other_key = os.path.join(self.tmp, "other", "signing.key")
        forged = {
            "the payload re-signed with an unknown key, the real kid":
                sign(other_key, payload, footer, implicit),
            "the payload re-signed with an unknown key and its kid":
                sign(other_key, payload,
                     json.dumps({"kid": self.other_kid}).encode(), implicit),
            "the footer naming another kid, the real signature":
                HDR + b64e(payload + sig) + "." +
                b64e(json.dumps({"kid": self.other_kid}).encode()),
            "no footer": HDR + b64e(payload + sig),
            "a prefix": grant[:-1],
            "half of it": grant[:len(grant) // 2],
            "an extension": grant + "A",
            "an extra part": grant + ".e30",
        }
        for i in range(len(payload)):
            p = bytearray(payload)
            p[i] ^= 1
            forged["payload byte %d flipped" % i] = \
                HDR + b64e(bytes(p) + sig) + "." + b64e(footer)
        for i in (0, 31, 63):
            s = bytearray(sig)
            s[i] ^= 0x80
            forged["signature byte %d flipped" % i] = \
                HDR + b64e(payload + bytes(s)) + "." + b64e(footer)
        for k in (len(HDR) + 3, len(grant) - 2):
            c = grant[k]
            forged["character %d changed" % k] = \
                grant[:k] + ("B" if c != "B" else "C") + grant[k + 1:]
        self.assertTrue(kid.startswith("k4.pid."), kid)
        for label, token in forged.items():
            self.assertNotEqual(token, grant, label)
            st, b, _ = self.srv.redeem(token, iid)
            self.assertIn(st, (400, 403), (label, b))
            if st == 403:
                self.assertEqual(b["error"]["code"], "GRANT_INVALID",
                                 (label, b))
        self.assertEqual(self.state(iid), "ALLOWED")
        st, b, _ = self.srv.redeem(grant, iid)
        self.assertEqual(st, 200, b)
        self.assertEqual(b["claims"], claims)
        self.assertEqual(b["intent"]["intent_id"], iid)
        self.refused(grant, iid, 409, "GRANT_ALREADY_REDEEMED")

    def test_a_payload_resigned_with_a_trusted_key_is_not_the_grant(self):
        # A second key the PDP trusts (public_keys): a token it signs
        # over the very same claims verifies, yet it is not the token
        # this PDP issued for the intent.
        self.restart(lambda t: "public_keys = other/signing.pub\n" + t)
        grant, iid = self.allow(11)
        payload, _, _ = split(grant)
        implicit = json.loads(payload)["intent_hash"].encode()
        token = sign(os.path.join(self.tmp, "other", "signing.key"), payload,
                     json.dumps({"kid": self.other_kid}).encode(), implicit)
        self.refused(token, iid)
        self.assertEqual(self.srv.redeem(grant, iid)[0], 200)

    def test_the_token_of_another_intent(self):
        g1, i1 = self.allow(12)
        g2, i2 = self.allow(13)
        self.refused(g1, i2)
        self.refused(g2, i1)
        self.refused(g1, "no-such-intent", 404, "NOT_FOUND")
        self.assertEqual(self.srv.redeem(g1, i1)[0], 200)
        self.assertEqual(self.srv.redeem(g2, i2)[0], 200)

    def test_the_token_of_another_executor(self):
        grant, iid = self.allow(14)
        self.refused(grant, iid, who=self.env["INTENTGATE_EXECUTOR2_TOKEN"])
        self.assertEqual(self.state(iid), "ALLOWED")
        self.assertEqual(self.srv.redeem(grant, iid)[0], 200)

    def test_an_expired_token(self):
        grant, iid = self.allow(15)
        late, late_id = self.allow(16)
        # grant_ttl is 30 s; 3 s short, as the test clock is an offset on
        # the real one and a second of real time may pass meanwhile.
        self.srv.advance(27)
        self.assertEqual(self.srv.redeem(grant, iid)[0], 200)
        self.srv.advance(3)
        self.refused(late, late_id, 410, "GRANT_EXPIRED")
        self.assertEqual(self.state(late_id), "EXPIRED")

    def test_a_retired_key_retires_its_grants(self):
        grant, iid = self.allow(17)
        kept, kept_id = self.allow(18)
        # A new signing key, the old one no longer trusted: its grants no
        # longer redeem, although their tokens are the stored ones.
        self.restart(lambda t: t.replace("signing_key = keys/signing.key",
                                         "signing_key = other/signing.key"))
        self.refused(grant, iid)
        # The old public key listed: they do.
        self.restart(lambda t: "public_keys = keys/signing.pub\n" + t)
        self.assertEqual(self.srv.redeem(grant, iid)[0], 200)
        self.assertEqual(self.srv.redeem(kept, kept_id)[0], 200)


if __name__ == "__main__":
    run_tests()
