/*
 * cmd_policy_eval.c - `intentgate policy eval`: decide one intent with a
 * bundle, offline, and say why.
 *
 * Loads the bundle (with --settings as its `config`), reads the intent
 * binding (a file or stdin; missing binding fields get the defaults the
 * usage lists, unknown ones are refused: a typo must not go unseen),
 * evaluates it once with a trace (pol_engine_eval_traced) and prints the
 * decision, and with --trace each policy's verdict and time. count() reads
 * an in-memory ig_counter preloaded from --count KEY=N, so nothing touches
 * a server or its quotas. Everything printed that a policy or the intent
 * wrote goes through the terminal-safe escaper (cli_show.h).
 *
 * Exit status: 0 after any evaluation (the verdict is the output, not an
 * error; an ERROR/LIMIT is a BLOCK too), 1 when the output cannot be
 * written, 2 bad usage or input (one line on stderr names it).
 */
#include "cmd_policy_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_show.h"
#include "ig_buf.h"
#include "ig_counter.h"
#include "ig_json.h"
#include "ig_limits.h"
#include "ig_time.h"
#include "pol.h"

#define CMD "policy eval"
#define EVAL_COUNTS_MAX 64 /* --count options */

static const char eval_usage[] =
    "usage: intentgate policy eval --bundle DIR --intent FILE [--trace]\n"
    "                              [--settings FILE | --config FILE]\n"
    "                              [--count KEY=N ...]\n"
    "                              [--format text|json]\n"
    "\n"
    "Decide one intent with the policy bundle in DIR, offline, and print the\n"
    "decision: verdict, reasons, message (and for ESCALATE the approvers,\n"
    "quorum and ttl). With --trace, also which policy file returned which\n"
    "verdict, in the order they ran, with each one's time in microseconds.\n"
    "\n"
    "  --intent FILE    the intent binding as JSON (- for stdin), e.g.\n"
    "                   {\"action\":\"git.push\",\"resource\":\"repo/x\",\n"
    "                    \"params\":{\"refs\":[\"refs/heads/main\"]}}\n"
    "                   Missing fields get defaults: version\n"
    "                   intentgate.intent/1, intent_id, principal\n"
    "                   agent:policy-eval, tenant policy-eval, resource \"\",\n"
    "                   params {}, context {}, created_at now, expires_at\n"
    "                   now + 60 s. action is required; an `approval`\n"
    "                   object evaluates as at quorum; other fields are\n"
    "                   refused.\n"
    "  --settings FILE  a JSON object the policies see as `config` (what\n"
    "                   the server's [policy] section gives them)\n"
    "  --config FILE    or: the server's config file, its [policy]\n"
    "                   settings read as the server reads them\n"
    "  --count KEY=N    count(KEY) has seen N hits already (default 0: the\n"
    "                   intent's own hit makes it 1); repeatable\n"
    "  --format F       text (default) or json:\n"
    "                   "
    "{\"decision\":{...},\"trace\":[{\"policy\",\"verdict\",\n"
    "                    \"reasons\",\"us\"}...]}\n"
    "\n"
    "Exit status: 0 when the intent was evaluated, whatever the verdict; 2\n"
    "bad arguments, a bundle that does not load or an unreadable intent.\n";

struct eval_opts {
    const char *bundle, *intent, *settings, *config, *format;
    int trace;
    size_t ncounts;
    const char *counts[EVAL_COUNTS_MAX];
};

/* The value of option argv[*i], moving *i past it; NULL after an error. */
static const char *
opt_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        cli_error(CMD, "%s needs a value (see --help)", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

static int
parse_args(int argc, char **argv, struct eval_opts *o)
{
    const char **slot;
    int i;

    memset(o, 0, sizeof(*o));
    for (i = 1; i < argc; i++) {
        slot = NULL;
        if (strcmp(argv[i], "--trace") == 0) {
            o->trace = 1;
            continue;
        }
        if (strcmp(argv[i], "--bundle") == 0)
            slot = &o->bundle;
        else if (strcmp(argv[i], "--intent") == 0)
            slot = &o->intent;
        else if (strcmp(argv[i], "--settings") == 0)
            slot = &o->settings;
        else if (strcmp(argv[i], "--config") == 0)
            slot = &o->config;
        else if (strcmp(argv[i], "--format") == 0)
            slot = &o->format;
        else if (strcmp(argv[i], "--count") == 0) {
            if (o->ncounts == EVAL_COUNTS_MAX) {
                cli_error(CMD, "more than %d --count options", EVAL_COUNTS_MAX);
                return -1;
            }
            slot = &o->counts[o->ncounts++];
        } else {
            cli_error(CMD, "unknown argument `%s` (see --help)", argv[i]);
            return -1;
        }
        if (*slot != NULL) {
            cli_error(CMD, "%s given twice", argv[i]);
            return -1;
        }
        if ((*slot = opt_value(argc, argv, &i)) == NULL)
            return -1;
    }
    if (o->bundle == NULL || o->intent == NULL) {
        cli_error(CMD, "expected --bundle DIR and --intent FILE (see --help)");
        return -1;
    }
    if (o->settings != NULL && strcmp(o->settings, "-") == 0 &&
        strcmp(o->intent, "-") == 0) {
        cli_error(CMD, "--intent and --settings cannot both read stdin");
        return -1;
    }
    if (o->format == NULL)
        o->format = "text";
    if (strcmp(o->format, "text") != 0 && strcmp(o->format, "json") != 0) {
        cli_error(CMD, "--format must be text or json, not `%s`", o->format);
        return -1;
    }
    return 0;
}

/* Read and parse a JSON file (what names it in messages). */
static json_t *
read_json(const char *path, const char *what)
{
    struct ig_buf b;
    struct ig_err err;
    json_t *v = NULL;

    ig_err_clear(&err);
    ig_buf_init(&b, IG_CANON_MAX_BYTES);
    if (cli_read_input(path, &b, &err) != IG_OK)
        cli_error(CMD, "%s %s: %s", what, cli_input_name(path), err.msg);
    else if (ig_json_parse(b.data != NULL ? b.data : "", b.len, &v, &err) !=
             IG_OK)
        cli_error(CMD, "%s %s is not valid JSON: %s", what,
                  cli_input_name(path), err.msg);
    ig_buf_release(&b);
    return v;
}

/* ---- the intent ---- */

/* The binding's fields: name, JSON type, default (NULL: required or
   computed). */
static const struct {
    const char *name;
    json_type type;
    const char *dflt;
} fields[] = {
    {"version", JSON_STRING, "intentgate.intent/1"},
    {"intent_id", JSON_STRING, "00000000-0000-4000-8000-000000000000"},
    {"principal", JSON_STRING, "agent:policy-eval"},
    {"tenant", JSON_STRING, "policy-eval"},
    {"action", JSON_STRING, NULL},
    {"resource", JSON_STRING, ""},
    {"params", JSON_OBJECT, NULL},
    {"context", JSON_OBJECT, NULL},
    {"created_at", JSON_STRING, NULL},
    {"expires_at", JSON_STRING, NULL},
    {"approval", JSON_OBJECT, NULL},
};

#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static const char *
type_name(json_type t)
{
    return t == JSON_OBJECT ? "an object" : "a string";
}

/* Check the intent's fields; 0, or -1 after naming the problem. */
static int
check_fields(const json_t *in, const char *name)
{
    const char *k;
    json_t *v;
    size_t i;

    if (!json_is_object(in)) {
        cli_error(CMD, "intent %s must be a JSON object", name);
        return -1;
    }
    json_object_foreach(ig_json_unconst(in), k, v)
    {
        for (i = 0; i < NFIELDS && strcmp(k, fields[i].name) != 0; i++)
            ;
        if (i == NFIELDS) {
            cli_error(CMD,
                      "intent %s: unknown field `%.64s` (a binding has "
                      "version, intent_id, principal, tenant, action, "
                      "resource, params, context, created_at, expires_at, "
                      "approval)",
                      name, k);
            return -1;
        }
        if (json_typeof(v) != fields[i].type) {
            cli_error(CMD, "intent %s: %s must be %s", name, k,
                      type_name(fields[i].type));
            return -1;
        }
    }
    if (json_object_get(in, "action") == NULL) {
        cli_error(CMD, "intent %s: action is required", name);
        return -1;
    }
    return 0;
}

/* Fill the missing fields of in; 0, or -1 (out of memory, the clock). */
static int
fill_defaults(json_t *in)
{
    char now[IG_TIME_STRLEN + 1], later[IG_TIME_STRLEN + 1];
    int64_t t = ig_time_now();
    const char *dflt;
    size_t i;
    int rc = 0;

    if (ig_time_format(t, now) != IG_OK ||
        ig_time_format(t + 60, later) != IG_OK)
        return -1;
    for (i = 0; i < NFIELDS && rc == 0; i++) {
        if (json_object_get(in, fields[i].name) != NULL ||
            strcmp(fields[i].name, "approval") == 0 ||
            strcmp(fields[i].name, "action") == 0)
            continue;
        dflt = fields[i].dflt;
        if (strcmp(fields[i].name, "created_at") == 0)
            dflt = now;
        else if (strcmp(fields[i].name, "expires_at") == 0)
            dflt = later;
        /* json_object_set_new steals the new value (NULL fails it). */
        rc = json_object_set_new(in, fields[i].name,
                                 dflt != NULL ? json_string(dflt)
                                              : json_object());
    }
    return rc == 0 ? 0 : -1;
}

/* ---- count() ---- */

struct eval_count {
    struct ig_counter *c;
    int64_t now;
};

static int64_t
eval_count_hit(void *ctx, const char *key, int64_t window)
{
    struct eval_count *ec = ctx;

    return ig_counter_hit(ec->c, key, window, ec->now);
}

/* Preload the --count KEY=N hits at ec->now; 0, or -1 after an error. */
static int
load_counts(struct eval_count *ec, const struct eval_opts *o)
{
    const char *eq, *kv;
    char *end, key[IG_STORE_COUNT_KEY_MAX + 1];
    long long n;
    size_t i, j, klen;

    for (i = 0; i < o->ncounts; i++) {
        kv = o->counts[i];
        eq = strrchr(kv, '=');
        klen = eq != NULL ? (size_t)(eq - kv) : 0;
        if (eq == NULL || klen == 0 || klen > IG_STORE_COUNT_KEY_MAX) {
            cli_error(CMD, "--count wants KEY=N with a key of 1 to %d bytes",
                      IG_STORE_COUNT_KEY_MAX);
            return -1;
        }
        for (j = 0; j < i; j++)
            if ((size_t)(strrchr(o->counts[j], '=') - o->counts[j]) == klen &&
                memcmp(o->counts[j], kv, klen) == 0) {
                cli_error(CMD, "--count %.*s given twice", (int)klen, kv);
                return -1;
            }
        errno = 0;
        n = strtoll(eq + 1, &end, 10);
        if (eq[1] == '\0' || *end != '\0' || errno != 0 || n < 0 ||
            n > 1000000000LL) {
            cli_error(CMD,
                      "--count %.*s: N must be a whole number from 0 "
                      "to 1000000000",
                      (int)klen, kv);
            return -1;
        }
        memcpy(key, kv, klen);
        key[klen] = '\0';
        if (n > 0 && ig_counter_load(ec->c, key, ec->now, n) != 0) {
            cli_error(CMD, "--count %s: out of memory", key);
            return -1;
        }
    }
    return 0;
}

/* ---- output ---- */

/* s as terminal-safe text into b (sticky status st). */
static void
safe(struct ig_buf *b, enum ig_status *st, const char *s)
{
    if (*st == IG_OK)
        *st = cli_text_safe(b, s, strlen(s));
}

static void
raw(struct ig_buf *b, enum ig_status *st, const char *s)
{
    if (*st == IG_OK)
        *st = ig_buf_adds(b, s);
}

static void
pad(struct ig_buf *b, enum ig_status *st, size_t from, size_t to)
{
    for (; from < to; from++)
        raw(b, st, " ");
}

static void
text_decision(struct ig_buf *b, enum ig_status *st,
              const struct pol_decision *d, const char *revision)
{
    char num[32];
    size_t i;

    raw(b, st, "decision  ");
    raw(b, st, pol_verdict_name(d->verdict));
    raw(b, st, "\nreasons   ");
    for (i = 0; i < d->nreasons; i++) {
        raw(b, st, i > 0 ? ", " : "");
        safe(b, st, d->reasons[i]);
    }
    raw(b, st, d->nreasons == 0 ? "none\nmessage   " : "\nmessage   ");
    safe(b, st, d->message[0] != '\0' ? d->message : "-");
    if (d->verdict == POL_ESCALATE) {
        raw(b, st, "\napprovers ");
        for (i = 0; i < d->ngroups; i++) {
            raw(b, st, i > 0 ? ", " : "");
            safe(b, st, d->groups[i]);
        }
        raw(b, st, d->ngroups == 0 ? "(the server's default)" : "");
        raw(b, st, "\nquorum    ");
        (void)snprintf(num, sizeof(num), "%d", d->quorum);
        raw(b, st, d->quorum > 0 ? num : "(the server's default)");
        raw(b, st, "\nttl       ");
        (void)snprintf(num, sizeof(num), "%lld s", (long long)d->ttl_seconds);
        raw(b, st, d->ttl_seconds > 0 ? num : "(the server's default)");
    }
    raw(b, st, "\nrevision  ");
    raw(b, st, revision);
    raw(b, st, "\n");
}

static void
text_trace(struct ig_buf *b, enum ig_status *st, const struct pol_trace *t)
{
    size_t i, j, n, width = 0;
    char us[48];

    for (i = 0; i < pol_trace_len(t); i++) {
        n = strlen(pol_trace_policy(t, i));
        width = n > width ? n : width;
    }
    raw(b, st,
        pol_trace_len(t) == 0 ? "trace     no policy had an opinion\n"
                              : "trace\n");
    for (i = 0; i < pol_trace_len(t); i++) {
        raw(b, st, "  ");
        safe(b, st, pol_trace_policy(t, i));
        pad(b, st, strlen(pol_trace_policy(t, i)), width);
        raw(b, st, "  ");
        raw(b, st, pol_trace_verdict_name(pol_trace_verdict(t, i)));
        pad(b, st, strlen(pol_trace_verdict_name(pol_trace_verdict(t, i))), 8);
        raw(b, st, "  ");
        for (j = 0; j < pol_trace_nreasons(t, i); j++) {
            raw(b, st, j > 0 ? ", " : "");
            safe(b, st, pol_trace_reason(t, i, j));
        }
        raw(b, st, pol_trace_nreasons(t, i) == 0 ? "-" : "");
        (void)snprintf(us, sizeof(us), "  %lld us\n",
                       (long long)(pol_trace_ns(t, i) / 1000));
        raw(b, st, us);
    }
}

static json_t *
json_decision(const struct pol_decision *d, const char *revision)
{
    json_t *reasons = json_array(), *groups = json_array(), *out;
    size_t i;

    for (i = 0; reasons != NULL && i < d->nreasons; i++)
        if (json_array_append_new(reasons, json_string(d->reasons[i])) != 0) {
            json_decref(reasons);
            reasons = NULL;
        }
    for (i = 0; groups != NULL && i < d->ngroups; i++)
        if (json_array_append_new(groups, json_string(d->groups[i])) != 0) {
            json_decref(groups);
            groups = NULL;
        }
    /* "o" steals reasons and groups, also when the pack fails. */
    out = json_pack("{s:s, s:o, s:s, s:s}", "verdict",
                    pol_verdict_name(d->verdict), "reasons", reasons, "message",
                    d->message, "revision", revision);
    if (out != NULL && d->verdict == POL_ESCALATE &&
        json_object_set_new(out, "approval",
                            json_pack("{s:o, s:i, s:I}", "groups", groups,
                                      "quorum", d->quorum, "ttl",
                                      (json_int_t)d->ttl_seconds)) != 0) {
        json_decref(out);
        return NULL;
    }
    if (d->verdict != POL_ESCALATE)
        json_decref(groups);
    return out;
}

/* {"decision":..., "trace":[... "us"]} (trace only when asked). */
static json_t *
json_output(const struct pol_decision *d, const char *revision,
            const struct pol_trace *t, int with_trace)
{
    json_t *out = json_pack("{s:o}", "decision", json_decision(d, revision));
    json_t *arr, *x;
    size_t i;

    if (out == NULL || !with_trace)
        return out;
    arr = json_array();
    /* json_object_set_new steals arr (NULL fails it). */
    if (json_object_set_new(out, "trace", arr) != 0) {
        json_decref(out);
        return NULL;
    }
    for (i = 0; i < pol_trace_len(t); i++) {
        x = pol_trace_entry_json(t, i);
        /* set_new steals the number; append_new steals x. */
        if (x == NULL ||
            json_object_set_new(x, "us",
                                json_integer(pol_trace_ns(t, i) / 1000)) != 0 ||
            json_array_append_new(arr, x) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

static int
print_result(const struct eval_opts *o, const struct pol_decision *d,
             const char *revision, const struct pol_trace *t)
{
    struct ig_buf b;
    enum ig_status st = IG_OK;
    json_t *j;
    char *s = NULL;
    int rc = CLI_EXIT_OK;

    ig_buf_init(&b, IG_CANON_MAX_BYTES);
    if (strcmp(o->format, "json") == 0) {
        j = json_output(d, revision, t, o->trace);
        s = j != NULL ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER)
                      : NULL;
        json_decref(j);
        raw(&b, &st, s != NULL ? s : "");
        raw(&b, &st, "\n");
        if (s == NULL)
            st = IG_ERR_NOMEM;
        free(s);
    } else {
        text_decision(&b, &st, d, revision);
        if (o->trace)
            text_trace(&b, &st, t);
    }
    if (st != IG_OK) {
        cli_error(CMD, "cannot write the result: %s", ig_strerror(st));
        rc = CLI_EXIT_FAIL;
    } else if (fwrite(b.data, 1, b.len, stdout) != b.len ||
               fflush(stdout) != 0) {
        cli_error(CMD, "cannot write to standard output");
        rc = CLI_EXIT_FAIL;
    }
    ig_buf_release(&b);
    return rc;
}

/* ---- the command ---- */

struct eval_run {
    json_t *settings, *intent;
    struct pol_bundle *b;
    struct pol_engine *e;
    struct pol_trace *t;
    struct eval_count count;
};

static int
eval_prepare(const struct eval_opts *o, struct eval_run *r)
{
    struct ig_err err;

    if (cli_policy_settings(CMD, o->settings, o->config, &r->settings) != 0)
        return -1;
    if ((r->intent = read_json(o->intent, "intent")) == NULL ||
        check_fields(r->intent, cli_input_name(o->intent)) != 0)
        return -1;
    r->count.now = ig_time_now();
    r->count.c =
        ig_counter_new(IG_STORE_COUNT_KEYS_MAX, IG_STORE_COUNT_WINDOW_MAX);
    r->t = pol_trace_new();
    if (r->count.c == NULL || r->t == NULL || fill_defaults(r->intent) != 0) {
        cli_error(CMD, "out of memory");
        return -1;
    }
    if (load_counts(&r->count, o) != 0)
        return -1;
    ig_err_clear(&err);
    if (pol_bundle_load(o->bundle, r->settings, &r->b, &err) != IG_OK ||
        pol_engine_new(r->b, NULL, eval_count_hit, &r->count, &r->e, &err) !=
            IG_OK) {
        cli_error(CMD, "%s", err.msg);
        return -1;
    }
    return 0;
}

int
cli_policy_eval(int argc, char **argv)
{
    struct eval_opts o;
    struct eval_run r;
    struct pol_decision d;
    int rc = CLI_EXIT_USAGE;

    if (cli_wants_help(argc, argv)) {
        (void)fputs(eval_usage, stdout);
        return CLI_EXIT_OK;
    }
    memset(&r, 0, sizeof(r));
    if (parse_args(argc, argv, &o) == 0 && eval_prepare(&o, &r) == 0) {
        pol_engine_eval_traced(r.e, r.intent, &d, r.t);
        rc = print_result(&o, &d, pol_bundle_revision(r.b), r.t);
    }
    pol_engine_free(r.e);
    pol_bundle_unref(r.b);
    pol_trace_free(r.t);
    ig_counter_free(r.count.c);
    json_decref(r.intent);
    json_decref(r.settings);
    return rc;
}
