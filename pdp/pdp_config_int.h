/*
 * pdp_config_int.h - private to the config reader: the parse state shared
 * by pdp_config.c (lines and sections) and pdp_config_keys.c (what each
 * key means and how it is checked).
 */
#ifndef PDP_CONFIG_INT_H
#define PDP_CONFIG_INT_H

#include "pdp_config.h"

#define CFG_LINE_MAX 4096
#define CFG_MAX_PRINCIPALS 10000

#define CFG_MAX_APPROVERS 10000

enum cfg_section {
    SEC_TOP = 0,
    SEC_POLICY,
    SEC_PRINCIPAL,
    SEC_APPROVALS,
    SEC_APPROVER,
    SEC_SLACK,
    SEC_AUDIT,
    SEC_LIMITS
};

struct cfg_parse {
    struct pdp_config *c;
    struct ig_err *err;
    const char *path;
    int line;
    enum cfg_section sec;
    struct pdp_principal *cur; /* SEC_PRINCIPAL: the one being read */
    int cur_line;              /* where its section started */
    int has_token;
    unsigned seen;                 /* top-level keys seen, one bit each */
    struct pdp_approver *cur_appr; /* SEC_APPROVER: the one being read */
    unsigned seen_sec;             /* keys seen in the current section */
    unsigned sections;             /* [approvals] / [slack] / [audit] */
};

/* Set err to "PATH:LINE: message"; returns -1. */
int cfg_error(struct cfg_parse *p, const char *fmt, ...) IG_PRINTF(2, 3);

struct pdp_config *cfg_defaults(const char *path);
int cfg_section_begin(struct cfg_parse *p, const char *kind, const char *id);
int cfg_section_end(struct cfg_parse *p);
int cfg_set(struct cfg_parse *p, const char *key, const char *value);
int cfg_finish(struct cfg_parse *p);

/* A whole number lo..hi for key (error names the range); a non-empty
   string copied into *dst (replacing it). 0, or -1 with err set. */
int cfg_int(struct cfg_parse *p, const char *key, const char *v, int64_t lo,
            int64_t hi, int64_t *out);
int cfg_string(struct cfg_parse *p, const char *key, const char *v, char **dst);

/* pdp_config_approvals.c: [approvals], [approver ID] and [slack]. */
int cfg_valid_id(const char *id);
int cfg_list(struct cfg_parse *p, const char *key, const char *v, char ***out,
             size_t *n);
int cfg_appr_begin(struct cfg_parse *p, const char *kind, const char *id);
int cfg_appr_set(struct cfg_parse *p, const char *key, const char *value);
int cfg_appr_end(struct cfg_parse *p);
int cfg_appr_finish(struct cfg_parse *p, const char *dir);
void cfg_appr_free(struct pdp_config *c);

/* pdp_config_audit.c: [audit]. */
int cfg_audit_begin(struct cfg_parse *p, const char *id);
int cfg_audit_set(struct cfg_parse *p, const char *key, const char *value);
int cfg_audit_finish(struct cfg_parse *p, const char *dir);
void cfg_audit_free(struct pdp_config *c);
int cfg_resolve(struct cfg_parse *p, const char *dir, char **pp);

/* pdp_config_limits.c: [limits]. */
int cfg_limits_begin(struct cfg_parse *p, const char *id);
int cfg_limits_set(struct cfg_parse *p, const char *key, const char *value);
int cfg_limits_finish(struct cfg_parse *p);

#endif
