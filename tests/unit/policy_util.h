/*
 * policy_util.h - helpers shared by the policy engine tests: throwaway
 * bundle directories, one-file evaluations and decision checks. Test code
 * only; failures abort the running test through cmocka.
 */
#ifndef IG_POLICY_UTIL_H
#define IG_POLICY_UTIL_H

#include "testutil.h"

#include <jansson.h>

#include "pol.h"

/*
 * A new directory under $TMPDIR (or /tmp) holding files, given as a
 * NULL-terminated list of name, content pairs. Returns the malloc'd path.
 */
char *pt_bundle_dir(const char *const *files);
/* Write (or overwrite) dir/name with content. */
void pt_write(const char *dir, const char *name, const char *content);
/* Remove every file in dir and dir itself, then free the path. */
void pt_rmdir(char *dir);

/* Load dir with settings (may be NULL); fails the test unless IG_OK. */
struct pol_bundle *pt_load(const char *dir, const json_t *settings);
/* A new engine; fails the test unless IG_OK. */
struct pol_engine *pt_engine(struct pol_bundle *b, const struct pol_limits *l,
                             pol_count_fn count, void *ctx);

/* Parse JSON text (jansson); fails the test on a syntax error. */
json_t *pt_json(const char *text);
/* Evaluate the JSON text intent on e. */
void pt_eval(struct pol_engine *e, const char *intent,
             struct pol_decision *out);

/*
 * The whole path in one call: a bundle whose only policy "p.lua" is src,
 * default limits, a counter answering 1, intent as JSON text.
 */
void pt_eval1(const char *src, const char *intent, struct pol_decision *out);

/*
 * Check a decision: its verdict, its first reason (unless NULL) and that
 * its message contains msg (unless NULL); prints the decision on failure.
 */
void pt_expect(const struct pol_decision *d, enum pol_verdict v,
               const char *reason, const char *msg);

/*
 * Run body (Lua statements, typically asserts) inside a policy function;
 * the test fails unless it reaches its final `return ALLOW`.
 */
void pt_lua_asserts(const char *body);

/* A counter answering 1 and remembering the last key and window. */
struct pt_counter {
    int64_t answer;
    int calls;
    char key[600];
    int64_t window;
};
int64_t pt_count(void *ctx, const char *key, int64_t window);

/* An intent for action with params (a JSON object text, or NULL). */
const char *pt_intent(const char *action, const char *params);

/*
 * Run pol_bundle_test on the bundle in dir loaded with settings (may be
 * NULL); its output (or "error: ..." when it could not run) goes to out.
 * Returns pol_bundle_test's result.
 */
int pt_bundle_test(const char *dir, const json_t *settings, char *out,
                   size_t outsz);

/* Test groups, run by test_policy.c's main. */
int pt_run_sandbox_tests(void);
int pt_run_helper_tests(void);
int pt_run_bundle_tests(void);
int pt_run_net_tests(void);
int pt_run_text_tests(void);

#endif
