/*
 * fuzz_leaf.c - libFuzzer target for audit_leaf_time (audit_leaf.h), which
 * `intentgate audit verify` runs on every leaf of a database or export it
 * is given.
 *
 * Beyond "never crash or read past the input", it checks the scan against
 * a real parser: when jansson parses the input as an object without
 * duplicate keys, the scan must agree with jansson on whether there is a
 * top-level "time" holding a time string, and on its value. (A key or
 * value spelled with escapes is read by jansson but, by design, not by
 * the scan: those inputs are skipped, as are those with a NUL byte,
 * which jansson passes over after a number.) And on every input it must give
 * the status and time of the byte-at-a-time reference scan
 * (tests/unit/audit_leaf_ref.h), which the word-at-a-time one replaced.
 * Seeds: tests/fuzz/corpus/leaf/.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/audit_leaf_ref.h"
#include "audit_leaf.h"
#include "ig_time.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size > 0 ? size : 1);
    const char *text = (const char *)data, *s;
    int64_t t = -1, want = -1, ref = -1;
    enum ig_status st;
    json_t *v, *m;
    size_t n;
    int have;

    if (copy == NULL)
        return 0;
    memcpy(copy, data, size); /* exactly size bytes: ASan sees a read past */
    st = audit_leaf_time(copy, size, &t);
    if (ref_leaf_time(copy, size, &ref) != st || ref != t)
        abort(); /* the fast scan and the reference disagree */
    free(copy);
    if (st != IG_OK && t != -1)
        abort(); /* *t written on failure */
    /* A time before 1970 is negative: t == -1 may then be a real time. */
    if (memchr(text, '\\', size) != NULL)
        return 0;
    /* Nor a NUL byte: jansson 2.14 reads `{"id":1<NUL>,"time":...}` as an
       object (a NUL ends its number token and is then passed over), which
       the scan, like RFC 8259, does not. A leaf never holds one: canonical
       JSON escapes every control character. */
    if (memchr(text, '\0', size) != NULL)
        return 0;
    v = json_loadb(text, size, JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK,
                   NULL);
    if (!json_is_object(v)) {
        json_decref(v);
        return 0;
    }
    m = json_object_get(v, "time");
    s = json_string_value(m);
    n = json_string_length(m);
    have = s != NULL && ig_time_parse(s, n, &want) == IG_OK;
    if (have != (st == IG_OK) || (have && t != want))
        abort();
    json_decref(v);
    return 0;
}
