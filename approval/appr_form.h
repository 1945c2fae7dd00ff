/*
 * appr_form.h - a strict decoder for application/x-www-form-urlencoded
 * bodies (what an HTML form posts), for untrusted bytes.
 *
 * A body is NAME=VALUE pairs joined by '&'. In both parts '+' is a space
 * and %XX (two hex digits, either case) is one byte; every other byte must
 * be printable ASCII (0x21-0x7E), as browsers send it. Refused: a body over
 * APPR_FORM_MAX_BYTES, more than APPR_FORM_MAX_FIELDS pairs, an empty pair
 * ("a=1&&b=2", a trailing '&'), a pair without '=', a malformed escape
 * ("%4", "%zz"), a decoded NUL byte, a decoded part that is not valid UTF-8
 * (overlong forms, surrogates and code points past U+10FFFF included), a
 * name that is empty, longer than APPR_FORM_MAX_NAME or not made of
 * [A-Za-z0-9_.-], and a name given twice. An empty body is a form with no
 * fields.
 *
 * Error text never quotes a value (a form may carry a password). The
 * decoded bytes are wiped when the form is freed.
 */
#ifndef APPR_FORM_H
#define APPR_FORM_H

#include <stddef.h>

#include "ig_error.h"
#include "ig_limits.h"

#define APPR_FORM_MAX_BYTES IG_FORM_MAX_BYTES
#define APPR_FORM_MAX_FIELDS IG_FORM_MAX_FIELDS
#define APPR_FORM_MAX_NAME IG_FORM_MAX_NAME

struct appr_form;

/*
 * Decode len bytes of body (need not be NUL-terminated; NULL is fine when
 * len is 0). On IG_OK *out holds a new form the caller frees with
 * appr_form_free(). On failure *out is NULL and err says why:
 * IG_ERR_LIMIT (size or field count), IG_ERR_INVALID (malformed),
 * IG_ERR_NOMEM. Thread safe.
 */
enum ig_status appr_form_parse(const char *body, size_t len,
                               struct appr_form **out,
                               struct ig_err *err) IG_WUR;

/* The decoded value of field name (NUL-terminated; valid while f lives),
   or NULL when the form has no such field. *len (when not NULL) receives
   its length. f and name may not be NULL. */
const char *appr_form_get(const struct appr_form *f, const char *name,
                          size_t *len);

/* Number of fields. */
size_t appr_form_count(const struct appr_form *f);

/* The name of field i (0-based, in body order), or NULL past the last. */
const char *appr_form_name(const struct appr_form *f, size_t i);

/* Wipe and free. NULL is fine. */
void appr_form_free(struct appr_form *f);

#endif
