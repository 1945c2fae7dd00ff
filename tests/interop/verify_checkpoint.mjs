#!/usr/bin/env node
// verify_checkpoint.mjs - an independent verifier of intentgate's signed
// checkpoints and tlog-proofs, written from the specs, sharing no code
// with the C library: C2SP signed-note and tlog-checkpoint, the Go
// sumdb/note verifier key form, C2SP tlog-proof, and RFC 6962 / RFC 9162
// Merkle inclusion proofs. Node.js built-ins only (node:crypto Ed25519).
//
//   node verify_checkpoint.mjs VKEY CHECKPOINT [PROOF LEAF]
//
// Each argument is a file name, or "-" for standard input (one of them at
// most). VKEY holds "<name>+<8 hex key id>+<base64(0x01 || key)>". The
// checkpoint must carry a valid signature by that key and have the key's
// name as its origin. With PROOF (a c2sp.org/tlog-proof@v1 file) and LEAF
// (the leaf's exact bytes), the proof's own checkpoint must verify the
// same way and name the same tree, and the leaf must be included at the
// proof's index. Prints one line; exits 0 when everything holds, else 1.

import { createHash, createPublicKey, verify } from "node:crypto";
import { readFileSync } from "node:fs";

class Fail extends Error {}
const fail = (msg) => {
  throw new Fail(msg);
};

const read = (arg) => readFileSync(arg === "-" ? 0 : arg);
const sha256 = (...parts) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest();
};

// Strict standard base64 (RFC 4648 section 4, padded).
const b64 = (s, what) => {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s))
    fail(`${what}: not base64`);
  const b = Buffer.from(s, "base64");
  if (b.toString("base64") !== s) fail(`${what}: non-canonical base64`);
  return b;
};

const validName = (n) =>
  n.length > 0 && !/[\s+\u0000-\u001f\u007f-\u00a0]/u.test(n);

function parseVerifierKey(text) {
  const s = text.trim();
  const i = s.indexOf("+");
  const j = i < 0 ? -1 : s.indexOf("+", i + 1);
  if (j < 0) fail("verifier key: want <name>+<id>+<key>");
  const name = s.slice(0, i), hex = s.slice(i + 1, j);
  if (!validName(name)) fail("verifier key: bad name");
  if (!/^[0-9a-fA-F]{8}$/.test(hex)) fail("verifier key: bad key id");
  const raw = b64(s.slice(j + 1), "verifier key");
  if (raw.length !== 33 || raw[0] !== 0x01)
    fail("verifier key: not an Ed25519 key");
  const pk = raw.subarray(1);
  const id = sha256(Buffer.from(name + "\n", "utf8"), raw).subarray(0, 4);
  if (id.readUInt32BE(0) !== parseInt(hex, 16))
    fail("verifier key: key id does not match name and key");
  const key = createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: pk.toString("base64url") },
    format: "jwk",
  });
  return { name, id: id.readUInt32BE(0), key };
}

// A signed note: returns its text (with the final newline) once a line by
// the verifier's name and key id verifies (and none of its lines fails).
function openNote(buf, v) {
  const note = buf.toString("utf8");
  if (!Buffer.from(note, "utf8").equals(buf)) fail("note: not UTF-8");
  if (/[\u0000-\u0009\u000b-\u001f]/.test(note))
    fail("note: control character");
  const split = note.lastIndexOf("\n\n");
  if (split < 0) fail("note: no blank line before the signatures");
  const text = note.slice(0, split + 1);
  const sigs = note.slice(split + 2);
  if (sigs === "" || !sigs.endsWith("\n"))
    fail("note: signatures must end with a newline");
  let ok = false;
  for (const line of sigs.slice(0, -1).split("\n")) {
    const m = /^\u2014 (\S+) (\S+)$/u.exec(line);
    if (!m) fail("note: malformed signature line");
    const [, name, sig64] = m;
    if (!validName(name)) fail("note: bad key name");
    const sig = b64(sig64, "signature");
    if (sig.length < 5) fail("note: short signature");
    if (name !== v.name || sig.readUInt32BE(0) !== v.id) continue;
    if (sig.length !== 68 ||
        !verify(null, Buffer.from(text, "utf8"), v.key, sig.subarray(4)))
      fail(`note: invalid signature by ${v.name}`);
    ok = true;
  }
  if (!ok) fail(`note: no signature by ${v.name}`);
  return text;
}

function parseCheckpoint(text, v) {
  const lines = text.split("\n");
  if (lines.length !== 4 || lines[3] !== "")
    fail("checkpoint: want exactly origin, size and root lines");
  const [origin, size, root64] = lines;
  if (origin !== v.name) fail("checkpoint: origin is not the key's name");
  if (!/^(0|[1-9][0-9]*)$/.test(size) || BigInt(size) >= 2n ** 64n)
    fail("checkpoint: bad size");
  const root = b64(root64, "root");
  if (root.length !== 32) fail("checkpoint: root is not 32 bytes");
  return { origin, size: BigInt(size), root };
}

function parseProof(buf) {
  const s = buf.toString("utf8");
  const lines = [];
  let pos = 0;
  const next = () => {
    const nl = s.indexOf("\n", pos);
    if (nl < 0) fail("tlog-proof: truncated");
    const line = s.slice(pos, nl);
    pos = nl + 1;
    return line;
  };
  if (next() !== "c2sp.org/tlog-proof@v1") fail("tlog-proof: bad header");
  let line = next();
  if (line.startsWith("extra ")) {
    b64(line.slice(6), "extra");
    line = next();
  }
  const im = /^index (0|[1-9][0-9]*)$/.exec(line);
  if (!im) fail("tlog-proof: bad index line");
  const index = BigInt(im[1]);
  while ((line = next()) !== "") {
    const h = b64(line, "proof hash");
    if (h.length !== 32) fail("tlog-proof: hash is not 32 bytes");
    lines.push(h);
  }
  if (pos >= s.length) fail("tlog-proof: no checkpoint");
  return { index, proof: lines, note: Buffer.from(s.slice(pos), "utf8") };
}

// RFC 9162 section 2.1.3.2.
function verifyInclusion(leafHash, index, size, proof, root) {
  if (index >= size) return false;
  let fn = index, sn = size - 1n, r = leafHash;
  const node = (l, rr) => sha256(Buffer.from([1]), l, rr);
  for (const p of proof) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      r = node(p, r);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      r = node(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && r.equals(root);
}

function main(args) {
  if (args.length !== 2 && args.length !== 4)
    fail("usage: verify_checkpoint.mjs VKEY CHECKPOINT [PROOF LEAF]");
  if (args.filter((a) => a === "-").length > 1)
    fail("only one argument may be standard input");
  const v = parseVerifierKey(read(args[0]).toString("utf8"));
  const cp = parseCheckpoint(openNote(read(args[1]), v), v);
  let msg = `OK: ${cp.origin} size ${cp.size} root ${cp.root.toString("base64")}`;
  if (args.length === 4) {
    const p = parseProof(read(args[2]));
    const pcp = parseCheckpoint(openNote(p.note, v), v);
    if (pcp.size !== cp.size || !pcp.root.equals(cp.root))
      fail("tlog-proof: its checkpoint is another tree");
    const leaf = sha256(Buffer.from([0]), read(args[3]));
    if (!verifyInclusion(leaf, p.index, cp.size, p.proof, cp.root))
      fail(`leaf ${p.index}: inclusion proof does not verify`);
    msg += `; leaf ${p.index} included`;
  }
  return msg;
}

try {
  console.log(main(process.argv.slice(2)));
  process.exit(0);
} catch (e) {
  console.log(`FAIL: ${e instanceof Fail ? e.message : String(e)}`);
  process.exit(1);
}
