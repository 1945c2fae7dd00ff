/*
 * cmd_policy_replay.c - `intentgate policy replay`: every decision a
 * database recorded, evaluated again under a new bundle, and a report of
 * those that would change.
 *
 * The bundle is loaded and its tests run first, as the server does at
 * start (a bundle whose tests fail is refused). The database is read
 * offline and read-only (store/store_log.h: never written, nothing left
 * beside it), one scan of the decisions in the order they were made,
 * read and prepared on a thread of its own while this one evaluates them
 * in order (cli_replay_pipe.c, cli_replay_eval.c) and counts them in the
 * report (cli_replay_out.c). With --since, the decisions of the count window
 * before it are replayed too, unreported, so that quotas start with the
 * history they had; --action filters what is reported, not what is
 * counted.
 *
 * Exit status: 0 no decision changes, 1 some do, 2 bad usage or input
 * (arguments, settings, a bundle that does not load or fails its tests),
 * 3 the database cannot be read or holds rows that do not parse (the
 * report lists them).
 */
#include "cmd_policy_int.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_replay.h"
#include "ig_buf.h"
#include "ig_json.h"
#include "ig_key.h"
#include "ig_limits.h"
#include "ig_time.h"
#include "pol.h"
#include "store_log.h"

#define CMD "policy replay"
#define EXIT_DB 3

static const char replay_usage[] =
    "usage: intentgate policy replay --db FILE|URL --bundle DIR\n"
    "         [--since T] [--until T] [--action PREFIX]\n"
    "         [--format text|json|csv] [--settings FILE | --config FILE]\n"
    "\n"
    "Evaluate every decision recorded in the database again under the\n"
    "bundle in DIR (loaded and its tests run first, like the server does),\n"
    "in the order they were made, each at its own time with quotas counted\n"
    "afresh, and report those that would change: the verdict, or the same\n"
    "verdict with other reasons. Decisions no policy made (an approver's\n"
    "denial, an expiry) are counted, not replayed. The database is only\n"
    "read (a SQLite file or a postgresql:// URL without a password).\n"
    "\n"
    "  --since T, --until T  only decisions made at T or later / before T\n"
    "                        (RFC 3339 2026-11-24T00:00:00Z, or seconds\n"
    "                        since the epoch)\n"
    "  --action PREFIX       only report actions starting with PREFIX\n"
    "  --format F            text (default), json, or csv\n"
    "  --settings FILE       a JSON object given to the bundle as `config`\n"
    "                        (the server's [policy] settings)\n"
    "  --config FILE         or: the server's config file, its [policy]\n"
    "                        settings read as the server reads them\n"
    "Without either the bundle sees no settings: give the server's, or\n"
    "quota decisions (config.quota_per_minute) will differ.\n"
    "\n"
    "Exit status: 0 nothing changes, 1 some decisions change, 2 bad usage\n"
    "or a bundle refused, 3 the database cannot be read or has rows that\n"
    "do not parse.\n";

struct replay_args {
    const char *db, *bundle, *action, *settings, *config;
    int64_t since, until;
    int has_since;
    enum replay_format fmt;
};

/* T: RFC 3339 as the server writes it, or seconds since the epoch. */
static int
parse_time(const char *s, int64_t *out)
{
    char *end;
    long long v;

    if (s[0] >= '0' && s[0] <= '9' && strchr(s, '-') == NULL) {
        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno != 0 || *end != '\0')
            return -1;
        *out = (int64_t)v;
        return 0;
    }
    return ig_time_parse(s, strlen(s), out) == IG_OK ? 0 : -1;
}

static int
parse_format(const char *s, enum replay_format *out)
{
    if (strcmp(s, "text") == 0)
        *out = REPLAY_TEXT;
    else if (strcmp(s, "json") == 0)
        *out = REPLAY_JSON;
    else if (strcmp(s, "csv") == 0)
        *out = REPLAY_CSV;
    else
        return -1;
    return 0;
}

/* One option with its value; -1 with the error said. */
static int
option(struct replay_args *a, const char *opt, const char *val)
{
    if (val == NULL) {
        cli_error(CMD, "%s needs a value (see --help)", opt);
        return -1;
    }
    if (strcmp(opt, "--db") == 0)
        a->db = val;
    else if (strcmp(opt, "--bundle") == 0)
        a->bundle = val;
    else if (strcmp(opt, "--action") == 0)
        a->action = val;
    else if (strcmp(opt, "--settings") == 0)
        a->settings = val;
    else if (strcmp(opt, "--config") == 0)
        a->config = val;
    else if (strcmp(opt, "--since") == 0 || strcmp(opt, "--until") == 0) {
        if (parse_time(val, opt[2] == 's' ? &a->since : &a->until) != 0) {
            cli_error(CMD,
                      "%s: not a time (RFC 3339 like 2026-11-24T00:00:00Z, "
                      "or seconds since the epoch)",
                      opt);
            return -1;
        }
        a->has_since |= opt[2] == 's';
    } else if (strcmp(opt, "--format") == 0) {
        if (parse_format(val, &a->fmt) != 0) {
            cli_error(CMD, "--format must be text, json or csv");
            return -1;
        }
    } else {
        cli_error(CMD, "unknown option %s (see --help)", opt);
        return -1;
    }
    return 0;
}

static int
parse_args(int argc, char **argv, struct replay_args *a)
{
    int i;

    memset(a, 0, sizeof(*a));
    a->until = INT64_MAX;
    for (i = 1; i < argc; i += 2)
        if (option(a, argv[i], i + 1 < argc ? argv[i + 1] : NULL) != 0)
            return -1;
    if (a->db == NULL || a->bundle == NULL) {
        cli_error(CMD, "--db and --bundle are required (see --help)");
        return -1;
    }
    if (a->has_since && a->since >= a->until) {
        cli_error(CMD, "--since must be before --until");
        return -1;
    }
    return 0;
}

/* The bundle, loaded and tested as the server does; NULL when refused. */
static struct pol_bundle *
load_bundle(const struct replay_args *a)
{
    struct pol_bundle *b = NULL;
    struct ig_err err;
    json_t *settings;
    char *report = NULL, *fail;
    size_t len = 0;
    FILE *f;
    int failed = -1;

    if (cli_policy_settings(CMD, a->settings, a->config, &settings) != 0)
        return NULL;
    ig_err_clear(&err);
    if (pol_bundle_load(a->bundle, settings, &b, &err) != IG_OK) {
        json_decref(settings);
        cli_error(CMD, "%s", err.msg);
        return NULL;
    }
    json_decref(settings);
    if ((f = open_memstream(&report, &len)) != NULL) {
        failed = pol_bundle_test(b, f, &err);
        (void)fclose(f);
    } else {
        (void)ig_err_set(&err, IG_ERR_NOMEM, "out of memory");
    }
    if (failed != 0) {
        fail = report != NULL ? strstr(report, "FAIL ") : NULL;
        if (failed < 0)
            cli_error(CMD, "the bundle's tests cannot run: %s", err.msg);
        else
            cli_error(CMD, "the bundle's tests fail (%d): %.*s", failed,
                      fail != NULL ? (int)strcspn(fail, "\n") : 0,
                      fail != NULL ? fail : "");
        pol_bundle_unref(b);
        b = NULL;
    }
    free(report);
    return b;
}

struct run_ctx {
    const struct replay_args *a;
    struct replay_engine *e;
    struct replay_report *rp;
};

/* 1 when row is reported: in the range and of the action asked for. */
static int
reported(const struct replay_args *a, const struct replay_row *row)
{
    if (a->has_since && row->decided_at < a->since)
        return 0; /* only warms the counters */
    return a->action == NULL ||
           (row->action != NULL &&
            strncmp(row->action, a->action, strlen(a->action)) == 0);
}

/* One prepared row, in order: evaluate, report. */
static int
one(void *ctx, struct replay_row *row)
{
    struct run_ctx *x = ctx;

    replay_evaluate(x->e, row);
    /* An unreadable row is listed whatever the filters: one of the day
       before --since, or of another action, still left a gap in what
       count() saw. */
    return reported(x->a, row) || row->r.kind == REPLAY_UNREADABLE
               ? replay_report_add(x->rp, row)
               : 0;
}

/* Replay every decision of the scan; CLI exit status. */
static int
run(const struct replay_args *a, struct store_log *log, struct replay_engine *e,
    struct replay_report *rp)
{
    struct run_ctx x = {a, e, rp};
    struct store_log_cursor *c = NULL;
    struct ig_err err;
    int64_t from = INT64_MIN;
    int rc;

    if (a->has_since)
        from = a->since > INT64_MIN + IG_STORE_COUNT_WINDOW_MAX
                   ? a->since - IG_STORE_COUNT_WINDOW_MAX
                   : INT64_MIN;
    ig_err_clear(&err);
    if (store_log_scan_decisions(log, from, a->until, &c, &err) != IG_OK) {
        cli_error(CMD, "%s", err.msg);
        return EXIT_DB;
    }
    rc = replay_pipe_run(c, one, &x, &err);
    store_log_cursor_free(c);
    if (rc == -2) {
        cli_error(CMD, "cannot write the report: standard output failed, "
                       "or out of memory");
        return CLI_EXIT_FAIL;
    }
    if (rc != 0) {
        cli_error(CMD, "%s", err.msg);
        return rc == -3 ? CLI_EXIT_FAIL : EXIT_DB;
    }
    return CLI_EXIT_OK;
}

int
cli_policy_replay(int argc, char **argv)
{
    struct replay_args a;
    struct pol_bundle *b = NULL;
    struct replay_engine *e = NULL;
    struct replay_report *rp = NULL;
    struct store_log *log = NULL;
    struct ig_err err;
    int rc = CLI_EXIT_USAGE;

    if (cli_wants_help(argc, argv)) {
        (void)fputs(replay_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (parse_args(argc, argv, &a) != 0)
        return CLI_EXIT_USAGE;
    if (ig_crypto_init() != IG_OK) { /* the report's keyed hashes */
        cli_error(CMD, "cannot initialise libsodium");
        return CLI_EXIT_FAIL;
    }
    if ((b = load_bundle(&a)) == NULL)
        return CLI_EXIT_USAGE;
    ig_err_clear(&err);
    if (replay_engine_new(b, a.fmt == REPLAY_JSON, &e, &err) != IG_OK) {
        cli_error(CMD, "%s", err.msg);
        goto out;
    }
    if (store_log_open(a.db, &log, &err) != IG_OK) {
        cli_error(CMD, "%s", err.msg);
        rc = EXIT_DB;
        goto out;
    }
    if ((rp = replay_report_new(a.fmt, stdout, a.db, a.bundle,
                                pol_bundle_revision(b), &err)) == NULL) {
        cli_error(CMD, "%s", err.msg);
        rc = CLI_EXIT_FAIL;
        goto out;
    }
    rc = run(&a, log, e, rp);
    if (rc == CLI_EXIT_OK || rc == EXIT_DB) {
        if (replay_report_count(rp, REPLAY_UNREADABLE) > 0)
            rc = EXIT_DB;
        else if (rc == CLI_EXIT_OK &&
                 replay_report_count(rp, REPLAY_VERDICT) +
                         replay_report_count(rp, REPLAY_REASONS) >
                     0)
            rc = CLI_EXIT_FAIL;
        if (replay_report_finish(rp) != 0) {
            cli_error(CMD, "cannot write to standard output");
            rc = rc == EXIT_DB ? EXIT_DB : CLI_EXIT_FAIL;
        }
        rp = NULL;
    }
out:
    replay_report_free(rp);
    store_log_close(log);
    replay_engine_free(e);
    pol_bundle_unref(b);
    return rc;
}
