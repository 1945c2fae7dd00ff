#!/usr/bin/env node
// verify_checkpoint.mjs - an independent verifier of intentgate's signed
// checkpoints, tlog-proofs and witness cosignatures, written from the
// specs, sharing no code with the C library: C2SP signed-note and
// tlog-checkpoint, the Go sumdb/note verifier key form, C2SP tlog-proof,
// RFC 6962 / RFC 9162 Merkle inclusion proofs, and C2SP tlog-cosignature
// (cosignature/v1, Ed25519, key type 0x04). Node.js built-ins only
// (node:crypto Ed25519).
//
//   node verify_checkpoint.mjs VKEY CHECKPOINT [PROOF LEAF]
//                              [--witness WVKEY]... [--quorum K]
//   node verify_checkpoint.mjs --vectors FILE.json
//   node verify_checkpoint.mjs --cosign SEED_HEX NAME TIME CHECKPOINT
//   node verify_checkpoint.mjs --witness-vkey SEED_HEX NAME
//
// Each argument is a file name, or "-" for standard input (one of them at
// most). VKEY holds "<name>+<8 hex key id>+<base64(0x01 || key)>". The
// checkpoint must carry a valid signature by that key and have the key's
// name as its origin. With PROOF (a c2sp.org/tlog-proof@v1 file) and LEAF
// (the leaf's exact bytes), the proof's own checkpoint must verify the
// same way and name the same tree, and the leaf must be included at the
// proof's index. With --witness (a file holding a witness's vkey,
// "<name>+<id>+<base64(0x04 || key)>"; repeatable), at least K (default:
// all) of the named witnesses must have a valid cosignature line on the
// checkpoint; a line by a named witness's name and key id that does not
// verify fails the whole check. Each witness counts once.
//
// --vectors checks this file's parsing and message building against the
// C2SP documents' examples (tests/vectors/audit/cosignature.json).
// --cosign prints the cosignature line of CHECKPOINT's text by the
// Ed25519 key of a 32-byte seed, as NAME at TIME; --witness-vkey prints
// that key's witness vkey: the C library must accept both, byte for byte.
// Prints one line; exits 0 when everything holds, else 1.

import {
  createHash,
  createPrivateKey,
  createPublicKey,
  sign,
  verify,
} from "node:crypto";
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

// A vkey of the given signature type: 0x01 a log's note key, 0x04 a
// witness's cosignature/v1 key (c2sp.org/signed-note, tlog-cosignature).
function parseVerifierKey(text, type = 0x01) {
  const s = text.trim();
  const i = s.indexOf("+");
  const j = i < 0 ? -1 : s.indexOf("+", i + 1);
  if (j < 0) fail("verifier key: want <name>+<id>+<key>");
  const name = s.slice(0, i), hex = s.slice(i + 1, j);
  if (!validName(name)) fail("verifier key: bad name");
  if (!/^[0-9a-fA-F]{8}$/.test(hex)) fail("verifier key: bad key id");
  const raw = b64(s.slice(j + 1), "verifier key");
  if (raw.length !== 33 || raw[0] !== type)
    fail(`verifier key: not an Ed25519 key of type 0x0${type}`);
  const pk = raw.subarray(1);
  const id = sha256(Buffer.from(name + "\n", "utf8"), raw).subarray(0, 4);
  if (id.readUInt32BE(0) !== parseInt(hex, 16))
    fail("verifier key: key id does not match name and key");
  const key = createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: pk.toString("base64url") },
    format: "jwk",
  });
  return { name, id: id.readUInt32BE(0), key, pk };
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

// The signature lines of a note (after its last blank line), as
// [name, bytes]: openNote has checked their shape.
function noteSignatures(buf) {
  const note = buf.toString("utf8");
  const sigs = note.slice(note.lastIndexOf("\n\n") + 2, -1);
  return sigs.split("\n").map((line) => {
    const [, name, sig64] = /^\u2014 (\S+) (\S+)$/u.exec(line);
    return [name, b64(sig64, "signature")];
  });
}

// ---- c2sp.org/tlog-cosignature, cosignature/v1 (Ed25519) ----

const TS_MAX = 2n ** 63n - 1n;

// The signed message: a header line, a timestamp line (decimal, no leading
// zeros), then the whole checkpoint text with its final newline.
const cosigMessage = (ts, text) =>
  Buffer.from(`cosignature/v1\ntime ${ts}\n${text}`, "utf8");

// A cosignature's 76 bytes: key id (4), timestamp (u64 big-endian), sig.
function splitCosig(sig) {
  if (sig.length !== 4 + 8 + 64) fail("cosignature: not 76 bytes");
  const ts = sig.readBigUInt64BE(4);
  if (ts > TS_MAX) fail("cosignature: timestamp over 2^63 - 1");
  return { id: sig.readUInt32BE(0), ts, sig: sig.subarray(12) };
}

// How witness w saw the checkpoint text: the latest timestamp of its
// valid lines, or null when no line is w's (name and key id). A line of
// w's that fails is a forgery or a copy from another checkpoint: fail.
function witnessed(sigs, text, w) {
  let best = null;
  for (const [name, sig] of sigs) {
    if (name !== w.name || sig.length < 4 || sig.readUInt32BE(0) !== w.id)
      continue;
    const c = splitCosig(sig);
    if (!verify(null, cosigMessage(c.ts, text), w.key, c.sig))
      fail(`cosignature: invalid cosignature by ${w.name}`);
    if (best === null || c.ts > best) best = c.ts;
  }
  return best;
}

const ed25519Seed = (hex) => {
  if (!/^[0-9a-f]{64}$/.test(hex)) fail("seed: want 64 hex digits");
  const der = Buffer.concat([
    Buffer.from("302e020100300506032b657004220420", "hex"), // PKCS#8 Ed25519
    Buffer.from(hex, "hex"),
  ]);
  const key = createPrivateKey({ key: der, format: "der", type: "pkcs8" });
  const pk = Buffer.from(createPublicKey(key).export({ format: "jwk" }).x,
                         "base64url");
  return { key, pk };
};

// A witness vkey: name, the key id over 0x04 || key, base64(0x04 || key).
function witnessVkey(name, pk) {
  const raw = Buffer.concat([Buffer.from([0x04]), pk]);
  const id = sha256(Buffer.from(name + "\n", "utf8"), raw).subarray(0, 4);
  return `${name}+${id.toString("hex")}+${raw.toString("base64")}`;
}

function cosignLine(seedHex, name, ts, text) {
  const { key, pk } = ed25519Seed(seedHex);
  const w = parseVerifierKey(witnessVkey(name, pk), 0x04);
  const head = Buffer.alloc(12);
  head.writeUInt32BE(w.id, 0);
  head.writeBigUInt64BE(ts, 4);
  const sig = sign(null, cosigMessage(ts, text), key);
  return `\u2014 ${name} ${Buffer.concat([head, sig]).toString("base64")}`;
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

// The C2SP documents' examples, as tests/vectors/audit/cosignature.json
// holds them.
function checkVectors(file) {
  const v = JSON.parse(read(file).toString("utf8"));
  const [, name, sig64] = /^\u2014 (\S+) (\S+)$/u.exec(v.c2sp_cosig_line);
  const c = splitCosig(b64(sig64, "c2sp cosignature"));
  if (name !== "witness.example.com/w1" ||
      c.id !== parseInt(v.c2sp_cosig_key_id, 16) ||
      c.ts !== BigInt(v.c2sp_cosig_time))
    fail("vectors: the C2SP example cosignature reads differently");
  if (!cosigMessage(c.ts, v.c2sp_checkpoint_text)
           .equals(Buffer.from(v.c2sp_signed_message, "utf8")))
    fail("vectors: the signed message is not the C2SP example's");
  const [, , log64] = /^\u2014 (\S+) (\S+)$/u.exec(v.c2sp_log_line);
  try {
    splitCosig(b64(log64, "c2sp log signature"));
    fail("vectors: a 68-byte note signature read as a cosignature");
  } catch (e) {
    if (!(e instanceof Fail) || e.message.startsWith("vectors")) throw e;
  }
  const w = parseVerifierKey(v.witness_vkey_ok, 0x04);
  if (w.id !== parseInt(v.witness_vkey_ok_key_id, 16) ||
      witnessVkey(w.name, w.pk) !== v.witness_vkey_ok)
    fail("vectors: the published witness vkey does not round-trip");
  for (const bad of [v.vkey_log_type, ...v.vkeys_bad]) {
    let ok = true;
    try {
      parseVerifierKey(bad, 0x04);
    } catch (e) {
      if (!(e instanceof Fail)) throw e;
      ok = false;
    }
    if (ok) fail(`vectors: accepted the bad witness vkey ${bad}`);
  }
  const f = splitCosig(b64(v.formats_cosig_b64, "formats cosignature"));
  if (f.id !== parseInt(v.formats_cosig_key_id, 16) ||
      f.ts !== BigInt(v.formats_cosig_time))
    fail("vectors: the transparency-dev/formats cosignature reads differently");
  return "OK: the C2SP and transparency-dev examples read as published";
}

// The note's text (up to and with the newline before its last blank line).
const noteText = (buf) => {
  const note = buf.toString("utf8");
  const split = note.lastIndexOf("\n\n");
  return split < 0 ? note : note.slice(0, split + 1);
};

function main(all) {
  if (all[0] === "--vectors" && all.length === 2) return checkVectors(all[1]);
  if (all[0] === "--witness-vkey" && all.length === 3)
    return witnessVkey(all[2], ed25519Seed(all[1]).pk);
  if (all[0] === "--cosign" && all.length === 5) {
    if (!/^[1-9][0-9]*$/.test(all[3])) fail("cosign: bad time");
    return cosignLine(all[1], all[2], BigInt(all[3]), noteText(read(all[4])));
  }
  const args = [], wfiles = [];
  let quorum = null;
  for (let i = 0; i < all.length; i++) {
    if (all[i] === "--witness" && i + 1 < all.length) wfiles.push(all[++i]);
    else if (all[i] === "--quorum" && i + 1 < all.length) quorum = all[++i];
    else args.push(all[i]);
  }
  if ((args.length !== 2 && args.length !== 4) ||
      (quorum !== null && (wfiles.length === 0 || !/^[1-9][0-9]*$/.test(quorum))))
    fail("usage: verify_checkpoint.mjs VKEY CHECKPOINT [PROOF LEAF] " +
         "[--witness WVKEY]... [--quorum K]");
  if (args.filter((a) => a === "-").length > 1)
    fail("only one argument may be standard input");
  const v = parseVerifierKey(read(args[0]).toString("utf8"));
  const note = read(args[1]);
  const text = openNote(note, v);
  const cp = parseCheckpoint(text, v);
  let msg = `OK: ${cp.origin} size ${cp.size} root ${cp.root.toString("base64")}`;
  if (wfiles.length > 0) {
    const ws = wfiles.map((f) => parseVerifierKey(read(f).toString("utf8"), 0x04));
    const seen = new Set();
    for (const w of ws) {
      if (seen.has(`${w.name}+${w.id}`)) fail(`witness ${w.name} named twice`);
      seen.add(`${w.name}+${w.id}`);
    }
    const sigs = noteSignatures(note);
    const got = ws.filter((w) => witnessed(sigs, text, w) !== null);
    const k = quorum === null ? ws.length : Number(quorum);
    if (k > ws.length) fail(`quorum ${k} of ${ws.length} witnesses`);
    if (got.length < k)
      fail(`cosignatures: ${got.length} of ${ws.length} witnesses, ${k} needed`);
    msg += `; cosigned by ${got.map((w) => w.name).join(", ")}`;
  }
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
