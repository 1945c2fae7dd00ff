/*
 * exec_git_pkt.h - the git smart-HTTP wire, as the executor's git gateway
 * needs it: pkt-lines, the commands of a receive-pack request, the report
 * git shows for a refused push, the upstream's report, and the refs of an
 * advertisement.
 *
 * Everything here is pure: no I/O, no globals, thread safe (distinct
 * outputs per thread). Every input is the untrusted bytes of a possibly
 * compromised agent (the request) or of the upstream (the reply, the
 * advertisement): each reader stays inside len, allocates no more than the
 * input justifies, and caps counts. Pointer arguments must not be NULL
 * unless a function says so; an input buffer may be NULL when its len is
 * 0. err may be NULL (the detail is dropped).
 *
 * pkt-line (git Documentation/technical/protocol-common): 4 hex digits
 * (either case) giving the total length including themselves, then the
 * payload. "0000" flush, "0001" delim, "0002" response-end; "0003" is
 * invalid (1..3 cannot hold the length itself; 1 and 2 are the special
 * packets); at most EXEC_GIT_PKT_MAX bytes in all.
 *
 * Trailing newlines: git's own reader (PACKET_READ_CHOMP_NEWLINE) drops one
 * '\n' at the end of a payload. The client sends none on commands and
 * options, but every reader here accepts one optional trailing '\n' (never
 * two) on a line, as git does, so the gateway reads what git reads.
 */
#ifndef EXEC_GIT_PKT_H
#define EXEC_GIT_PKT_H

#include <jansson.h>
#include <stddef.h>

#include "ig_buf.h"
#include "ig_error.h"

#define EXEC_GIT_CMDS_MAX 1000          /* commands per push */
#define EXEC_GIT_HEAD_MAX (1024 * 1024) /* bytes before the pack */
#define EXEC_GIT_OPTIONS_MAX 1024       /* push options per push */
#define EXEC_GIT_SHALLOW_MAX 1024       /* shallow lines per push */
#define EXEC_GIT_REF_MAX 4096           /* bytes in a ref name (PATH_MAX) */
#define EXEC_GIT_PKT_MAX 65520          /* a pkt-line, length included */
#define EXEC_GIT_REASON_MAX 1024        /* bytes in a refusal reason */
#define EXEC_GIT_ADV_REFS_MAX 100000    /* refs in one advertisement */

enum exec_git_cmd_kind {
    EXEC_GIT_CREATE = 1,
    EXEC_GIT_UPDATE,
    EXEC_GIT_DELETE
};

struct exec_git_cmd {
    /* lowercase hex, 40 (sha1) or 64 (sha256) chars, same length */
    char old_id[65], new_id[65];
    char *ref; /* owned, NUL-terminated, no NUL inside (refused) */
    enum exec_git_cmd_kind kind;
};

struct exec_git_push {
    struct exec_git_cmd *cmds;
    size_t ncmds;
    /* owned: the capability list after the NUL of the first command ("" if
       none), as sent (git starts it with a space) */
    char *caps;
    int side_band_64k, report_status, report_status_v2, atomic, quiet,
        push_options;
    char **options; /* push options (owned), when the cap was sent */
    size_t noptions;
    size_t nshallow;    /* "shallow <id>" lines before the commands */
    size_t pack_offset; /* where the pack starts in the body */
    int probe; /* the body was exactly "0000" (git's probe before a large
                  chunked push) */
};

/*
 * Parse the start of a git-receive-pack request body. buf holds the first
 * len bytes of the body (the caller passes min(body, EXEC_GIT_HEAD_MAX)
 * bytes); complete says whether that is the whole body. *out is
 * overwritten (not released first).
 *
 * The body: optional "shallow <id>" lines (at most EXEC_GIT_SHALLOW_MAX,
 * ids of the commands' length), then the commands "<old> <new> <ref>", the
 * first followed by NUL and the capability list, then a flush; then, when
 * the push-options cap was sent, the options and their flush; then the
 * pack ("PACK"...) unless every command is a delete, in which case nothing
 * may follow. Only the pack's first 4 bytes are looked at.
 *
 * IG_OK and *out filled (free with exec_git_push_release), or
 * IG_ERR_INVALID (*out zeroed, nothing allocated) with err naming the
 * problem in one line; attacker bytes are never copied into err. Refused:
 * a malformed pkt-line length; a command that is not "<old> <new> <ref>";
 * ids of mixed length, of another length, not lowercase hex, or not the
 * object-format the caps name; a ref that is empty, longer than
 * EXEC_GIT_REF_MAX, or holds a NUL, a control byte, DEL or a space; a NUL
 * after the first command; more than EXEC_GIT_CMDS_MAX commands; a
 * command section (or option section) that does not end inside buf; a
 * first pkt-line starting "push-cert"; old and new both zero; two commands
 * for the same ref; options without the cap or the cap without options;
 * a pack that does not start "PACK", or is missing, or bytes after a
 * delete-only list. A body of exactly "0000" (complete) is IG_OK with
 * probe = 1, no commands, pack_offset 4. IG_ERR_NOMEM on allocation.
 */
enum ig_status exec_git_push_parse(const unsigned char *buf, size_t len,
                                   int complete, struct exec_git_push *out,
                                   struct ig_err *err) IG_WUR;

/* Free what a parse filled. NULL-safe; zeroes *p. */
void exec_git_push_release(struct exec_git_push *p);

/*
 * Compare the commands with what the grant's intent allows: refs = the
 * intent's params.refs, del = params.delete (arrays of strings; NULL, or
 * not an array, grants nothing; members that are not strings match
 * nothing). Every CREATE/UPDATE ref must be an exact (byte for byte, same
 * length) member of refs, every DELETE ref of del. reasons (ncmds entries)
 * gets, per command, NULL when allowed, else a static reason
 * (EXEC_GIT_REASON_REF or EXEC_GIT_REASON_DELETE). Returns the number of
 * refused commands; when it is not 0 the caller refuses the whole push.
 * Pure; thread safe on shared read-only JSON.
 */
size_t exec_git_push_check(const struct exec_git_push *p, const json_t *refs,
                           const json_t *del, const char **reasons);

#define EXEC_GIT_REASON_REF "intentgate: ref not granted"
#define EXEC_GIT_REASON_DELETE "intentgate: delete not granted"
#define EXEC_GIT_REASON_WHOLE "intentgate: push refused as a whole"

/*
 * The refusal git shows cleanly (HTTP 200,
 * application/x-git-receive-pack-result): report-status "unpack ok" then
 * one "ng <ref> <reason>" per command, in order (reasons[i] NULL ->
 * EXEC_GIT_REASON_WHOLE), flush; wrapped in side-band-64k channel 1
 * pkt-lines, then a final flush, when p->side_band_64k, plain otherwise.
 * report-status-v2 clients get the same (v2 is a superset for ng lines).
 * reasons may be NULL (all "as a whole"). Appends to out. IG_OK;
 * IG_ERR_LIMIT (out's cap) or IG_ERR_NOMEM with out possibly holding part
 * of the reply; IG_ERR_INVALID (nothing appended) for a reason longer than
 * EXEC_GIT_REASON_MAX or holding anything but printable ASCII (a newline
 * would forge a report line), or a ref a parse would have refused.
 */
enum ig_status exec_git_report_refusal(const struct exec_git_push *p,
                                       const char *const *reasons,
                                       struct ig_buf *out) IG_WUR;

/*
 * A blanket refusal for GET info/refs: "# service=<service>\n" pkt, flush,
 * "ERR <msg>\n" pkt, which git prints as "fatal: remote error: <msg>".
 * service is "git-receive-pack" or "git-upload-pack", msg printable ASCII
 * of at most EXEC_GIT_REASON_MAX bytes, else IG_ERR_INVALID (nothing
 * appended). Appends to out: IG_ERR_LIMIT / IG_ERR_NOMEM as ig_buf.
 */
enum ig_status exec_git_adv_error(const char *service, const char *msg,
                                  struct ig_buf *out) IG_WUR;

/*
 * Read the upstream's reply to a receive-pack POST (the whole body, len
 * bytes). side_band: the request asked for side-band-64k, so the reply is
 * channel-wrapped (channel 1 data holds the report, possibly split across
 * packets; channel 2 progress is skipped; channel 3 is a fatal error and
 * makes the reply invalid) and ends with a flush. The report: "unpack
 * ok" or "unpack <error>", then "ok <ref>" / "ng <ref> [<reason>]" lines
 * (v2 "option ..." lines ignored), then a flush; nothing may follow.
 *
 * IG_OK with *detail = a new object {"unpack": "ok" | "<error text>",
 * "refs": {"<ref>": "ok" | "<reason>"}} (the caller owns it) and *all_ok =
 * 1 when unpack is ok, at least one ref was reported and every ref is ok.
 * Texts from the upstream keep printable ASCII and turn other bytes into
 * '?'; an ng without a reason reads "ng", and an ng whose reason is "ok"
 * reads "ng ok", so "ok" always means ok. IG_ERR_INVALID (*detail NULL,
 * *all_ok 0) when the reply is not a report, a ref repeats or is not
 * valid (as in exec_git_push_parse) or not UTF-8: err says why.
 * IG_ERR_NOMEM on allocation.
 */
enum ig_status exec_git_report_parse(const unsigned char *buf, size_t len,
                                     int side_band, json_t **detail,
                                     int *all_ok, struct ig_err *err) IG_WUR;

/*
 * The refs of a v0 advertisement (the body of GET info/refs?service=...:
 * "# service=git-receive-pack|git-upload-pack\n" pkt, flush, then
 * "<id> <ref>\0caps" and "<id> <ref>" lines, flush, nothing after). For
 * each ref, calls fn(ctx, id, ref) (NUL-terminated, valid during the call
 * only). Not passed: "capabilities^{}" (an empty repo, first line only,
 * zero id), ".have" lines, peeled "<ref>^{}" lines, and "shallow <id>"
 * lines at the end. A "version 1" line may come first. IG_ERR_INVALID when
 * malformed (fn may have been called for earlier refs), IG_ERR_LIMIT over
 * EXEC_GIT_ADV_REFS_MAX refs.
 */
enum ig_status exec_git_adv_refs(const unsigned char *buf, size_t len,
                                 void (*fn)(void *ctx, const char *id,
                                            const char *ref),
                                 void *ctx, struct ig_err *err) IG_WUR;

/* ---- Building blocks, shared by the two source files ---- */

enum exec_git_pkt_kind {
    EXEC_GIT_PKT_DATA = 1,
    EXEC_GIT_PKT_FLUSH,
    EXEC_GIT_PKT_DELIM,
    EXEC_GIT_PKT_END
};

struct exec_git_pkt {
    enum exec_git_pkt_kind kind;
    const unsigned char *data; /* points into the input; NULL unless DATA */
    size_t len;                /* payload bytes, without the 4 */
};

/*
 * Read the pkt-line at buf[*off] (*off <= len). IG_OK, *pkt filled and
 * *off moved past it; IG_ERR_INVALID when the 4 length bytes are missing,
 * not hex, 3 or below but not 0..2 (i.e. 0003), over EXEC_GIT_PKT_MAX, or
 * run past len (err gives the offset).
 */
enum ig_status exec_git_pkt_read(const unsigned char *buf, size_t len,
                                 size_t *off, struct exec_git_pkt *pkt,
                                 struct ig_err *err) IG_WUR;

/* Append one data pkt-line holding n bytes (n <= EXEC_GIT_PKT_MAX - 4,
   else IG_ERR_LIMIT), or a flush with exec_git_pkt_flush. IG_ERR_LIMIT
   (out's cap) appends nothing; on IG_ERR_NOMEM the 4 length bytes may
   have been appended. */
enum ig_status exec_git_pkt_add(struct ig_buf *out, const void *data,
                                size_t n) IG_WUR;
enum ig_status exec_git_pkt_flush(struct ig_buf *out) IG_WUR;

/* The payload of a data pkt without its one optional trailing '\n'. */
size_t exec_git_chomp(const unsigned char *data, size_t n);

/* n when p[0..n) is lowercase hex and n is 40 or 64, else 0. */
size_t exec_git_id_len(const unsigned char *p, size_t n);

/* Whether p[0..n) holds only '0' (n > 0). */
int exec_git_id_zero(const unsigned char *p, size_t n);

/* Whether p[0..n) can be a ref here: 1..EXEC_GIT_REF_MAX bytes, none below
   0x21 (NUL, controls, space) nor 0x7f. */
int exec_git_ref_ok(const unsigned char *p, size_t n);

/* Whether the first command of a receive-pack body (buf, len bytes: all
   or its start) asks for side-band-64k in its capabilities, read from the
   raw pkt-lines: for refusing a push whose commands cannot be parsed as a
   whole (too many, say) on the channel git then reads. 0 on anything
   malformed. */
int exec_git_asks_side_band(const unsigned char *buf, size_t len);

#endif
