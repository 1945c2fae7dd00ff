/*
 * pdp_config_int.h - private to the config reader.
 *
 * The files depend downward only:
 *
 *   pdp_config.c            load: the INI reader's callbacks, the table of
 *                           section kinds, defaults, the final checks
 *   pdp_config_keys.c       top-level keys, [policy], principal sections
 *   pdp_config_approvals.c  [approvals], [approver ID], [slack]
 *   pdp_config_audit.c      [audit]
 *   pdp_config_witness.c    [witness ID]
 *   pdp_config_limits.c     [limits]
 *   pdp_config_util.c       the parse state's helpers: errors naming the
 *                           line, value parsers, dispatch by key name
 *
 * Every section's keys are a table of {name, setter} looked up by name:
 * the order of a table means nothing, so reordering it rewires nothing.
 */
#ifndef PDP_CONFIG_INT_H
#define PDP_CONFIG_INT_H

#include <stddef.h>
#include <stdint.h>

#include "pdp_config.h"

struct pdp_cfg_section;

struct pdp_cfg_parse {
    struct pdp_config *c;
    struct ig_err *err;
    const char *path;
    char *dir;    /* the file's directory: relative paths start there */
    int line;     /* the line being read; 0: the whole file */
    int sec_line; /* where the current section started */
    const struct pdp_cfg_section *sec; /* NULL: top level */
    unsigned seen_top;                 /* top-level keys seen, one bit each */
    unsigned seen_sec;                 /* keys seen in the current section */
    unsigned sections_seen;            /* sections that may appear once */
    struct pdp_principal *cur;         /* [agent] ...: the one being read */
    int has_token;                     /* ... and whether it has its token */
    struct pdp_approver *cur_appr;     /* [approver]: the one being read */
    int has_slack;                     /* a [slack] section was read */
    struct pdp_witness_cfg *cur_wit;   /* [witness]: the one being read */
};

/* One key of a section: its name and what sets it. The generic setters
   below use off (a field of struct pdp_config) and lo..hi. */
struct pdp_cfg_key {
    const char *name;
    int (*set)(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k,
               const char *v);
    size_t off;
    int64_t lo, hi;
};

#define PDP_CFG_NKEYS(a) (sizeof(a) / sizeof(*(a)))
#define PDP_CFG_FIELD(f) offsetof(struct pdp_config, f)
/* A key with its own setter; a key stored by a generic setter. */
#define PDP_CFG_KEY(name, fn)                                                  \
    {                                                                          \
        name, fn, 0, 0, 0                                                      \
    }
#define PDP_CFG_STR(name, f)                                                   \
    {                                                                          \
        name, pdp_cfg_set_str, PDP_CFG_FIELD(f), 0, 0                          \
    }
#define PDP_CFG_I64(name, f, lo, hi)                                           \
    {                                                                          \
        name, pdp_cfg_set_i64, PDP_CFG_FIELD(f), lo, hi                        \
    }
#define PDP_CFG_INT(name, f, lo, hi)                                           \
    {                                                                          \
        name, pdp_cfg_set_int, PDP_CFG_FIELD(f), lo, hi                        \
    }
#define PDP_CFG_BOOL(name, f)                                                  \
    {                                                                          \
        name, pdp_cfg_set_bool, PDP_CFG_FIELD(f), 0, 1                         \
    }

/* A kind of section. id: 1 when "[kind ID]" needs an id (begin checks
   it), 0 when it takes none. once: it may appear at most once. begin and
   end may be NULL. */
struct pdp_cfg_section {
    const char *kind;
    int id, once;
    int (*begin)(struct pdp_cfg_parse *p, const char *kind, const char *id);
    int (*set)(struct pdp_cfg_parse *p, const char *key, const char *v);
    int (*end)(struct pdp_cfg_parse *p);
};

/* ---- pdp_config_util.c ---- */

/* Set err to "PATH:LINE: message" ("PATH: message" when line is 0);
   returns -1. */
int pdp_cfg_error(struct pdp_cfg_parse *p, const char *fmt, ...)
    IG_PRINTF(2, 3);

/* Find key in the n keys, refuse it unknown ("unknown key K", plus " in
   [SECTION]" inside one) or seen before in *seen, and set it. */
int pdp_cfg_dispatch(struct pdp_cfg_parse *p, const struct pdp_cfg_key *keys,
                     size_t n, unsigned *seen, const char *key, const char *v);

/* The generic setters for a field of struct pdp_config at k->off: a
   non-empty string (char *), a whole number k->lo..k->hi (int64_t / int /
   size_t), true or false (int). */
int pdp_cfg_set_str(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k,
                    const char *v);
int pdp_cfg_set_i64(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k,
                    const char *v);
int pdp_cfg_set_int(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k,
                    const char *v);
int pdp_cfg_set_size(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k,
                     const char *v);
int pdp_cfg_set_bool(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k,
                     const char *v);

/* A whole number lo..hi for key (error names the range); a non-empty
   string copied into *dst (replacing it); "a, b ,c" appended to *out as
   trimmed non-empty strings (at least one; ig_str_list_free frees the
   list). 0, or -1 with err set. */
int pdp_cfg_int(struct pdp_cfg_parse *p, const char *key, const char *v,
                int64_t lo, int64_t hi, int64_t *out);
int pdp_cfg_string(struct pdp_cfg_parse *p, const char *key, const char *v,
                   char **dst);
int pdp_cfg_list(struct pdp_cfg_parse *p, const char *key, const char *v,
                 char ***out, size_t *n);

/* 1 when id is letters, digits and ._:@- (not first), at most
   IG_ID_MAX. */
int pdp_cfg_valid_id(const char *id);

/* Make *pp relative to p->dir unless it is absolute (or NULL). */
int pdp_cfg_resolve(struct pdp_cfg_parse *p, char **pp);

/* ---- pdp_config_keys.c: top level, [policy], [agent|executor|admin|
   auditor ID] ---- */
int pdp_cfg_top_set(struct pdp_cfg_parse *p, const char *key, const char *v);
int pdp_cfg_policy_set(struct pdp_cfg_parse *p, const char *key, const char *v);
int pdp_cfg_principal_begin(struct pdp_cfg_parse *p, const char *kind,
                            const char *id);
int pdp_cfg_principal_set(struct pdp_cfg_parse *p, const char *key,
                          const char *v);
int pdp_cfg_principal_end(struct pdp_cfg_parse *p);
int pdp_cfg_top_finish(struct pdp_cfg_parse *p);
void pdp_cfg_principals_free(struct pdp_config *c);

/* ---- pdp_config_approvals.c ---- */
int pdp_cfg_approvals_set(struct pdp_cfg_parse *p, const char *key,
                          const char *v);
int pdp_cfg_approver_begin(struct pdp_cfg_parse *p, const char *kind,
                           const char *id);
int pdp_cfg_approver_set(struct pdp_cfg_parse *p, const char *key,
                         const char *v);
int pdp_cfg_approver_end(struct pdp_cfg_parse *p);
int pdp_cfg_slack_begin(struct pdp_cfg_parse *p, const char *kind,
                        const char *id);
int pdp_cfg_slack_set(struct pdp_cfg_parse *p, const char *key, const char *v);
int pdp_cfg_appr_finish(struct pdp_cfg_parse *p);
void pdp_cfg_appr_free(struct pdp_config *c);

/* ---- pdp_config_audit.c ---- */
int pdp_cfg_audit_set(struct pdp_cfg_parse *p, const char *key, const char *v);
int pdp_cfg_audit_finish(struct pdp_cfg_parse *p);
void pdp_cfg_audit_free(struct pdp_config *c);

/* ---- pdp_config_witness.c ---- */
int pdp_cfg_witness_begin(struct pdp_cfg_parse *p, const char *kind,
                          const char *id);
int pdp_cfg_witness_set(struct pdp_cfg_parse *p, const char *key,
                        const char *v);
int pdp_cfg_witness_end(struct pdp_cfg_parse *p);
int pdp_cfg_witness_finish(struct pdp_cfg_parse *p);
void pdp_cfg_witness_free(struct pdp_config *c);

/* ---- pdp_config_limits.c ---- */
int pdp_cfg_limits_set(struct pdp_cfg_parse *p, const char *key, const char *v);
int pdp_cfg_limits_finish(struct pdp_cfg_parse *p);

#endif
