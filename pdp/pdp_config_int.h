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

enum cfg_section { SEC_TOP = 0, SEC_POLICY, SEC_PRINCIPAL };

struct cfg_parse {
    struct pdp_config *c;
    struct ig_err *err;
    const char *path;
    int line;
    enum cfg_section sec;
    struct pdp_principal *cur; /* SEC_PRINCIPAL: the one being read */
    int cur_line;              /* where its section started */
    int has_token;
    unsigned seen; /* top-level keys seen, one bit each */
};

/* Set err to "PATH:LINE: message"; returns -1. */
int cfg_error(struct cfg_parse *p, const char *fmt, ...) IG_PRINTF(2, 3);

struct pdp_config *cfg_defaults(const char *path);
int cfg_section_begin(struct cfg_parse *p, const char *kind, const char *id);
int cfg_section_end(struct cfg_parse *p);
int cfg_set(struct cfg_parse *p, const char *key, const char *value);
int cfg_finish(struct cfg_parse *p);

#endif
