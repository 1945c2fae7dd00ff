/*
 * fuzz_git_pkt.c - libFuzzer target for the git gateway's wire readers:
 * the input is read as a receive-pack request body (whole, and as the
 * first bytes of a longer body), as the upstream's report (with and
 * without side-band-64k) and as an advertisement; and asked whether it
 * wants side-band-64k.
 *
 * Properties beyond no crash and no leak: a parsed push keeps every
 * promise of exec_git_pkt.h (counts, id shapes, ref bytes, kinds, no
 * duplicate refs, pack_offset inside the input), the grant check refuses
 * exactly the commands left out of the grant, and the refusal written for
 * it reads back through exec_git_report_parse as one ng per command with
 * its reason (refs that are not UTF-8 are never granted: an intent is
 * JSON; and their report does not read back, as documented). A parsed report is
 * {"unpack": string, "refs": {string}}; every advertised ref has a hex id and a
 * valid ref.
 */
#include <stdlib.h>
#include <string.h>

#include "exec_git_pkt.h"
#include "ig_text.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c))                                                              \
            abort();                                                           \
    } while (0)

static void
check_cmds(const struct exec_git_push *p, size_t size)
{
    size_t i, j, il;

    CHECK(p->ncmds <= EXEC_GIT_CMDS_MAX);
    CHECK(p->noptions <= EXEC_GIT_OPTIONS_MAX);
    CHECK(p->pack_offset <= size && p->caps != NULL);
    CHECK(p->probe ? p->ncmds == 0 && size == 4 : p->ncmds > 0);
    for (i = 0; i < p->ncmds; i++) {
        const struct exec_git_cmd *c = &p->cmds[i];
        const unsigned char *o = (const unsigned char *)c->old_id;
        const unsigned char *n = (const unsigned char *)c->new_id;

        il = strlen(c->old_id);
        CHECK(exec_git_id_len(o, il) == il && strlen(c->new_id) == il);
        CHECK(exec_git_id_len(n, il) == il);
        CHECK(il == strlen(p->cmds[0].old_id));
        CHECK(exec_git_ref_ok((const unsigned char *)c->ref, strlen(c->ref)));
        CHECK(!(exec_git_id_zero(o, il) && exec_git_id_zero(n, il)));
        CHECK(c->kind == (exec_git_id_zero(o, il)   ? EXEC_GIT_CREATE
                          : exec_git_id_zero(n, il) ? EXEC_GIT_DELETE
                                                    : EXEC_GIT_UPDATE));
        for (j = 0; j < i; j++)
            CHECK(strcmp(p->cmds[j].ref, c->ref) != 0);
    }
}

/* Whether command i is granted: the even-numbered ones, when their ref
   can be a JSON string at all (git refs need not be UTF-8; intents are). */
static int
grant_it(const struct exec_git_push *p, size_t i)
{
    return i % 2 == 0 && ig_utf8_valid(p->cmds[i].ref, strlen(p->cmds[i].ref));
}

/* Grant some commands; the others must be refused, and the refusal must
   read back as written (when every ref is UTF-8: the report reader
   refuses other refs, which cannot be JSON keys). */
static void
check_refusal(const struct exec_git_push *p)
{
    json_t *refs = json_array(), *del = json_array(), *d = NULL;
    const char **why = calloc(p->ncmds + 1, sizeof(*why));
    struct ig_buf out;
    struct ig_err err;
    size_t i, refused = 0;
    int all_ok = 1, utf8 = 1;

    CHECK(refs != NULL && del != NULL && why != NULL);
    for (i = 0; i < p->ncmds; i++) {
        utf8 &= ig_utf8_valid(p->cmds[i].ref, strlen(p->cmds[i].ref));
        if (!grant_it(p, i)) {
            refused++;
            continue;
        }
        CHECK(json_array_append_new(p->cmds[i].kind == EXEC_GIT_DELETE ? del
                                                                       : refs,
                                    json_string(p->cmds[i].ref)) == 0);
    }
    CHECK(exec_git_push_check(p, refs, del, why) == refused);
    for (i = 0; i < p->ncmds; i++)
        CHECK((why[i] == NULL) == grant_it(p, i));
    ig_buf_init(&out, 8u << 20);
    CHECK(exec_git_report_refusal(p, why, &out) == IG_OK);
    if (exec_git_report_parse((const unsigned char *)out.data, out.len,
                              p->side_band_64k, &d, &all_ok, &err) != IG_OK) {
        CHECK(!utf8);
        goto out;
    }
    CHECK(all_ok == 0);
    CHECK(json_object_size(json_object_get(d, "refs")) == p->ncmds);
    for (i = 0; i < p->ncmds; i++) {
        const char *s = json_string_value(
            json_object_get(json_object_get(d, "refs"), p->cmds[i].ref));

        CHECK(s != NULL &&
              strcmp(s, why[i] ? why[i] : EXEC_GIT_REASON_WHOLE) == 0);
    }
out:
    json_decref(d);
    ig_buf_release(&out);
    free(why);
    json_decref(refs);
    json_decref(del);
}

static void
push(const unsigned char *data, size_t size, int complete)
{
    struct exec_git_push p;
    struct ig_err err;

    if (exec_git_push_parse(data, size, complete, &p, &err) != IG_OK)
        return;
    check_cmds(&p, size);
    if (p.ncmds > 0)
        check_refusal(&p);
    exec_git_push_release(&p);
}

static void
report(const unsigned char *data, size_t size, int side_band)
{
    struct ig_err err;
    const char *k;
    json_t *d = NULL, *refs, *v;
    int all_ok = 0;

    if (exec_git_report_parse(data, size, side_band, &d, &all_ok, &err) !=
        IG_OK) {
        CHECK(d == NULL && all_ok == 0);
        return;
    }
    CHECK(json_is_string(json_object_get(d, "unpack")));
    refs = json_object_get(d, "refs");
    CHECK(json_is_object(refs));
    json_object_foreach(refs, k, v) CHECK(json_is_string(v));
    CHECK(!all_ok || json_object_size(refs) > 0);
    json_decref(d);
}

static void
on_ref(void *ctx, const char *id, const char *ref)
{
    (void)ctx;
    CHECK(exec_git_id_len((const unsigned char *)id, strlen(id)) != 0);
    CHECK(exec_git_ref_ok((const unsigned char *)ref, strlen(ref)));
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct ig_err err;

    push(data, size, 1);
    push(data, size, 0);
    report(data, size, 0);
    report(data, size, 1);
    (void)exec_git_adv_refs(data, size, on_ref, NULL, &err);
    (void)exec_git_asks_side_band(data, size);
    return 0;
}
