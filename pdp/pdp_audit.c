/*
 * pdp_audit.c - the audit log's side of the server: its keys, and the
 * events that are not part of an intent's life - config.loaded at start,
 * policy reloads - plus the redacted copy of an intent that
 * intent.received records. (Refused requests are counted and written in
 * aggregate by pdp_refusals.c.)
 *
 * The checkpoint key (a k4.secret file, [audit] key) is loaded here and
 * handed to the store, which signs checkpoints on its writer thread
 * (store_audit.c); its verifier key goes into the start log line. The
 * HMAC key for redaction lives in sodium_malloc'd memory and is wiped at
 * stop.
 */
#include "pdp_int.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "audit_note.h"
#include "audit_redact.h"
#include "ig_b64.h"
#include "ig_file.h"
#include "ig_hash.h"
#include "ig_limits.h"

#define HMAC_KEY_BYTES AUDIT_REDACT_KEY_BYTES

static void
now_text(char out[IG_TIME_STRLEN + 1])
{
    if (ig_time_format(ig_time_now(), out) != IG_OK)
        out[0] = '\0';
}

/* ---- keys ---- */

/* Read the HMAC key file (ig_file_read_secret: a private regular file,
   one line): base64url of 32 bytes. */
static enum ig_status
load_hmac(struct pdp_server *s, const char *path, struct ig_err *err)
{
    enum ig_status rc;
    size_t n = 0, got = 0;
    char *text;

    rc = ig_file_read_secret(path, IG_AUDIT_HMAC_KEY_TEXT_MAX, &text, &n, err);
    if (rc == IG_OK && (s->audit_hmac = sodium_malloc(HMAC_KEY_BYTES)) == NULL)
        rc = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    if (rc == IG_OK &&
        (ig_b64_decode(text, n, s->audit_hmac, HMAC_KEY_BYTES, &got) != IG_OK ||
         got != HMAC_KEY_BYTES))
        rc = ig_err_set(err, IG_ERR_INVALID,
                        "%s must hold 32 random bytes as base64url", path);
    ig_file_free_secret(text); /* wipes; NULL after an error */
    return rc;
}

enum ig_status
pdp_audit_start(struct pdp_server *s, struct ig_err *err)
{
    const struct pdp_config *c = s->cfg;
    struct ig_public_key pub;

    if (c->audit_hmac_key != NULL &&
        load_hmac(s, c->audit_hmac_key, err) != IG_OK)
        return IG_ERR_IO;
    if (c->audit_key == NULL) {
        pdp_log("warning", "audit.unsigned",
                json_pack("{s:s, s:s}", "name", c->audit_name, "message",
                          "no [audit] key: the audit log's checkpoints are "
                          "not signed"));
        return IG_OK;
    }
    if (ig_signing_key_load_file(c->audit_key, &s->audit_key, err) != IG_OK)
        return IG_ERR_IO;
    ig_signing_key_public(s->audit_key, &pub);
    if (audit_verifier_format(c->audit_name, pub.pk, s->audit_verifier,
                              sizeof(s->audit_verifier)) != IG_OK)
        return ig_err_set(err, IG_ERR_INVALID,
                          "cannot make the audit verifier key for %s",
                          c->audit_name);
    return IG_OK;
}

void
pdp_audit_stop(struct pdp_server *s)
{
    ig_signing_key_free(s->audit_key);
    s->audit_key = NULL;
    sodium_free(s->audit_hmac); /* wipes it */
    s->audit_hmac = NULL;
}

/* ---- events ---- */

void
pdp_audit_append(struct pdp_server *s, json_t *ev)
{
    char *text = ev != NULL ? pdp_json_text(ev) : NULL;
    const char *const one[1] = {text};
    const char *type = json_string_value(json_object_get(ev, "type"));

    if (text == NULL || store_put_events(s->store, one, 1) != IG_OK)
        pdp_log("error", "audit.write_failed",
                json_pack("{s:s}", "type", type != NULL ? type : "?"));
    free(text);
    json_decref(ev);
}

/* "sha256:<hex>" of the config file's bytes ("" when unreadable). */
static void
file_hash(const char *path, char out[IG_HASH_STRLEN + 1])
{
    struct ig_sha256 *st = NULL;
    unsigned char buf[8192], h[IG_SHA256_BYTES];
    size_t n, total = 0;
    FILE *f = fopen(path, "rb");

    out[0] = '\0';
    if (f == NULL || ig_sha256_new(&st) != IG_OK)
        goto out;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0 &&
           (total += n) <= IG_PDP_CONFIG_HASH_MAX_BYTES)
        ig_sha256_update(st, buf, n);
    if (!ferror(f) && total <= IG_PDP_CONFIG_HASH_MAX_BYTES) {
        ig_sha256_final(st, h);
        memcpy(out, IG_HASH_PREFIX, 7);
        sodium_bin2hex(out + 7, 65, h, sizeof(h));
    }
out:
    ig_sha256_free(st);
    if (f != NULL)
        (void)fclose(f);
}

/* {"agent":[ids], "executor":[...], "admin":[...], "auditor":[...]} */
static json_t *
principals_by_role(const struct pdp_config *c)
{
    json_t *o = json_pack("{s:[], s:[], s:[], s:[]}", "agent", "executor",
                          "admin", "auditor");
    size_t i;

    for (i = 0; o != NULL && i < c->nprincipals; i++)
        /* json_array_append_new steals the string. (The config loads no
           principal without one of these roles.) */
        if (json_array_append_new(
                json_object_get(o, pdp_role_name(c->principals[i].role)),
                json_string(c->principals[i].id)) != 0) {
            json_decref(o);
            o = NULL;
        }
    return o;
}

static json_t *
approver_ids(const struct pdp_config *c)
{
    json_t *a = json_array();
    size_t i;

    for (i = 0; a != NULL && i < c->napprovers; i++)
        a = pdp_json_push(a, c->approvers[i].id);
    return a;
}

static json_t *
redact_pointers(const struct pdp_config *c)
{
    json_t *a = json_array();
    size_t i;

    for (i = 0; a != NULL && i < c->nredact; i++)
        a = pdp_json_push(a, c->redact[i]);
    return a;
}

/* [witness ID] sections as [{"id", "url", "key"}], in file order: who
   this log asks to cosign its checkpoints. NULL on out-of-memory. */
static json_t *
witness_list(const struct pdp_config *c)
{
    json_t *a = json_array(), *w;
    size_t i;

    for (i = 0; a != NULL && i < c->nwitnesses; i++) {
        w = json_pack("{s:s, s:s, s:s}", "id", c->witnesses[i].id, "url",
                      c->witnesses[i].url, "key", c->witnesses[i].vkey);
        /* json_array_append_new steals w (also when it fails). */
        if (w == NULL || json_array_append_new(a, w) != 0) {
            json_decref(a);
            a = NULL;
        }
    }
    return a;
}

void
pdp_audit_config_loaded(struct pdp_server *s)
{
    const struct pdp_config *c = s->cfg;
    char now[IG_TIME_STRLEN + 1], hash[IG_HASH_STRLEN + 1];
    json_t *ev;

    now_text(now);
    file_hash(c->path, hash);
    pthread_mutex_lock(&s->pol_mu);
    /* "o" steals the arrays and the object; a NULL one fails the pack
       (the event is then not written, and that is logged): never an
       event missing a list. */
    ev = json_pack(
        "{s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:{s:s, s:s?, s:o, s:o}}", "type",
        "config.loaded", "time", now, "path", c->path, "sha256", hash,
        "principals", principals_by_role(c), "approvers", approver_ids(c),
        "policy_revision", pol_bundle_revision(s->bundle), "audit", "name",
        c->audit_name, "verifier_key",
        s->audit_key != NULL ? s->audit_verifier : NULL, "redact",
        redact_pointers(c), "witnesses", witness_list(c));
    pthread_mutex_unlock(&s->pol_mu);
    pdp_audit_append(s, ev);
}

/* ---- redaction ---- */

json_t *
pdp_audit_redact_intent(struct pdp_server *s, json_t *binding)
{
    const struct pdp_config *c = s->cfg;
    json_t *params = json_object_get(binding, "params"), *copy, *p;
    struct ig_err err;

    if (c->nredact == 0 || s->audit_hmac == NULL || !json_is_object(params))
        return json_incref(binding);
    /* A new top level sharing everything but params, which is copied
       whole and redacted: the binding itself is never changed. */
    copy = json_copy(binding);
    p = json_deep_copy(params);
    if (copy == NULL || p == NULL ||
        audit_redact(p, (const char *const *)c->redact, c->nredact,
                     s->audit_hmac, &err) != IG_OK) {
        json_decref(p);
        json_decref(copy);
        return NULL;
    }
    /* json_object_set_new steals p. */
    if (json_object_set_new(copy, "params", p) != 0) {
        json_decref(copy);
        return NULL;
    }
    return copy;
}
