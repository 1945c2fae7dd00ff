/*
 * ig_ini.h - the one reader of intentgate's INI-style config files (the
 * PDP's and the executor's).
 *
 *   # a comment: '#' at the start of a line or after a space or tab
 *   key = value                 (both trimmed; the value may be empty)
 *   [kind]                      (a section; or [kind id])
 *   key = value   # note        (a value cannot contain " #")
 *
 * The reader knows the syntax only; what a section or a key means is the
 * caller's, told through two callbacks in file order. It is strict: a line
 * that is neither blank, a comment, a section header nor "key = value" is
 * an error, as are a key with spaces or controls in it, text after a
 * header's ']', a NUL byte, any other control character but tab (a final
 * CR of a CRLF line is dropped), bytes that are not UTF-8, a line over
 * IG_INI_LINE_MAX bytes (never cut short) and a file over IG_INI_FILE_MAX.
 * Each such error is one line "NAME:LINE: problem" in err, with err->line
 * set.
 */
#ifndef IG_INI_H
#define IG_INI_H

#include <stdarg.h>
#include <stddef.h>

#include "ig_error.h"

/*
 * What the reader calls. Each callback returns IG_OK to go on; any other
 * status stops the reading and is returned as it is, the callback having
 * filled the caller's error itself. line is 1-based. Strings are valid
 * only during the call.
 */
struct ig_ini_handler {
    /* "[kind]" (id NULL) or "[kind id]" (id is the trimmed rest after the
       first space or tab, never empty). NULL: the file has no sections,
       and a header line is an error. */
    enum ig_status (*section)(void *ctx, int line, const char *kind,
                              const char *id);
    /* "key = value": key non-empty without spaces, value trimmed. */
    enum ig_status (*key)(void *ctx, int line, const char *key,
                          const char *value);
};

/*
 * Parse len bytes of text (no terminator needed; NUL bytes are refused),
 * naming it name in errors. IG_OK; IG_ERR_INVALID or IG_ERR_LIMIT for
 * the reader's own errors; or a callback's status. Thread safe when the
 * callbacks are.
 */
enum ig_status ig_ini_parse(const char *name, const char *text, size_t len,
                            const struct ig_ini_handler *h, void *ctx,
                            struct ig_err *err) IG_WUR;

/*
 * Read the regular file at path (opened without blocking on a FIFO;
 * IG_ERR_IO naming it when it cannot be opened or read, or is no regular
 * file; IG_ERR_LIMIT over IG_INI_FILE_MAX) and ig_ini_parse it under its
 * path.
 */
enum ig_status ig_ini_read(const char *path, const struct ig_ini_handler *h,
                           void *ctx, struct ig_err *err) IG_WUR;

/*
 * A caller's own error about a config file, in the reader's shape: "PATH:
 * LINE: message" (line > 0) or "PATH: message", IG_ERR_INVALID in err.
 * Returns -1, so that a config's checks can say
 * `return their_error(...)`.
 */
int ig_ini_verror(struct ig_err *err, const char *path, int line,
                  const char *fmt, va_list ap) IG_PRINTF(4, 0);

#endif
