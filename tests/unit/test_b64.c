/*
 * test_b64.c - strict unpadded base64url: RFC 4648 vectors, round trips,
 * and every refusal (padding, '+', '/', whitespace, bytes 0x80-0xff,
 * dangling characters, non-zero trailing bits). Each test runs against
 * both codecs - libsodium's constant-time one and the table-driven one for
 * public data - and a last test checks that the two agree on random input.
 */
#include "testutil.h"

#include <sodium.h>
#include <string.h>

#include "ig_b64.h"

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

struct codec {
    size_t (*enc)(const void *in, size_t n, char *out, size_t outcap);
    enum ig_status (*dec)(const char *s, size_t len, unsigned char *out,
                          size_t outcap, size_t *outlen);
};

static struct codec sodium_codec = {ig_b64_encode, ig_b64_decode};
static struct codec public_codec = {ig_b64_encode_public, ig_b64_decode_public};

/* The codec under test: set from each test's state. */
static const struct codec *cd;

static void
use(void **state)
{
    cd = *state;
}

static int
decodes(const char *s, size_t len)
{
    unsigned char out[64];
    size_t n;

    return cd->dec(s, len, out, sizeof(out), &n) == IG_OK;
}

static int
decodes_str(const char *s)
{
    return decodes(s, strlen(s));
}

static void
test_rfc4648_vectors(void **state)
{
    static const char *const plain[] = {"",     "f",     "fo",    "foo",
                                        "foob", "fooba", "foobar"};
    static const char *const enc[] = {"",       "Zg",      "Zm8",     "Zm9v",
                                      "Zm9vYg", "Zm9vYmE", "Zm9vYmFy"};
    unsigned char out[16];
    char text[16];
    size_t i, n;
    use(state);

    for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
        n = cd->enc(plain[i], strlen(plain[i]), text, sizeof(text));
        assert_int_equal(n, strlen(enc[i]));
        assert_string_equal(text, enc[i]);
        assert_int_equal(cd->dec(enc[i], strlen(enc[i]), out, sizeof(out), &n),
                         IG_OK);
        assert_int_equal(n, strlen(plain[i]));
        assert_memory_equal(out, plain[i], n);
    }
}

static void
test_url_alphabet(void **state)
{
    static const unsigned char bytes[] = {0xfb, 0xff, 0xbf};
    unsigned char out[4];
    char text[8];
    size_t n;
    use(state);

    n = cd->enc(bytes, sizeof(bytes), text, sizeof(text));
    assert_int_equal(n, 4);
    assert_string_equal(text, "-_-_");
    assert_int_equal(cd->dec(text, n, out, sizeof(out), &n), IG_OK);
    assert_memory_equal(out, bytes, sizeof(bytes));
    /* The standard alphabet's '+' and '/' are refused. */
    assert_false(decodes_str("+/+/"));
    assert_false(decodes_str("-_+/"));
    assert_false(decodes_str("AA/A"));
}

static void
test_round_trip_lengths(void **state)
{
    unsigned char in[200], out[200];
    char text[300];
    size_t len, n, m;
    use(state);

    for (len = 0; len <= sizeof(in); len++) {
        randombytes_buf(in, len);
        n = cd->enc(in, len, text, sizeof(text));
        assert_int_equal(n, IG_B64_ENCODED_LEN(len));
        assert_int_equal(n + 1,
                         sodium_base64_ENCODED_LEN(
                             len, sodium_base64_VARIANT_URLSAFE_NO_PADDING));
        assert_int_equal(strlen(text), n);
        assert_int_equal(cd->dec(text, n, out, sizeof(out), &m), IG_OK);
        assert_int_equal(m, len);
        assert_memory_equal(out, in, len);
    }
}

/* One byte: only "xA", "xQ", "xg", "xw" (low 4 bits zero) are canonical. */
static void
test_trailing_bits_one_byte(void **state)
{
    use(state);

    assert_true(decodes_str("AA"));
    assert_false(decodes_str("AB"));
    assert_true(decodes_str("AQ"));
    assert_false(decodes_str("AR"));
    assert_false(decodes_str("Zh"));
    assert_true(decodes_str("Zg"));
}

/*
 * Exhaustive: a string of 2 or 3 alphabet characters decodes exactly when
 * re-encoding its bytes gives the same string back (one encoding per value).
 */
static void
test_only_canonical_encodings(void **state)
{
    unsigned char out[4];
    char s[4], back[8];
    size_t a, b, c, n, accepted = 0;
    use(state);

    for (a = 0; a < 64; a++)
        for (b = 0; b < 64; b++)
            for (c = 0; c < 65; c++) {
                size_t len = c == 64 ? 2 : 3;
                s[0] = alphabet[a];
                s[1] = alphabet[b];
                s[2] = c == 64 ? '\0' : alphabet[c];
                if (cd->dec(s, len, out, sizeof(out), &n) != IG_OK)
                    continue;
                accepted++;
                assert_int_equal(n, len - 1);
                (void)cd->enc(out, n, back, sizeof(back));
                assert_memory_equal(back, s, len);
            }
    /* 256 one-byte values and 65536 two-byte values, each exactly once. */
    assert_int_equal(accepted, 256 + 65536);
}

static void
test_padding_refused(void **state)
{
    use(state);

    assert_false(decodes_str("Zg=="));
    assert_false(decodes_str("Zg="));
    assert_false(decodes_str("Zm8="));
    assert_false(decodes_str("Zm9v="));
    assert_false(decodes_str("===="));
    assert_false(decodes_str("="));
}

static void
test_whitespace_refused(void **state)
{
    use(state);

    assert_false(decodes_str("Zm9v\n"));
    assert_false(decodes_str(" Zm9v"));
    assert_false(decodes_str("Zm 9v"));
    assert_false(decodes_str("Zm9v\t"));
    assert_false(decodes_str("Zm9v\r\n"));
    assert_false(decodes("Zm\0v", 4));
}

static void
test_dangling_character_refused(void **state)
{
    use(state);

    assert_false(decodes_str("Z"));
    assert_false(decodes_str("A"));
    assert_false(decodes_str("Zm9vY"));
    assert_false(decodes_str("AAAAA"));
}

/*
 * Every byte outside the alphabet, in every position of a 4-char group.
 * libsodium 1.0.18 alone reads bytes 0x80-0xff as '_': "AAA\x80" must not
 * be a second spelling of "AAA_".
 */
static void
test_every_foreign_byte_refused(void **state)
{
    char s[4];
    int c;
    size_t pos;
    use(state);

    assert_true(decodes_str("AAA_"));
    assert_false(decodes_str("AAA\x80"));
    assert_false(decodes_str("AAA\xff"));
    for (c = 0; c < 256; c++) {
        if (c != 0 && strchr(alphabet, c) != NULL)
            continue;
        for (pos = 0; pos < 4; pos++) {
            memcpy(s, "AAAA", 4);
            s[pos] = (char)c;
            assert_false(decodes(s, 4));
        }
    }
}

static void
test_output_too_small_refused(void **state)
{
    unsigned char out[3];
    size_t n = 99;
    use(state);

    assert_int_equal(cd->dec("Zm9v", 4, out, 2, &n), IG_ERR_INVALID);
    assert_int_equal(n, 0);
    assert_int_equal(cd->dec("Zm9vYg", 6, out, 3, &n), IG_ERR_INVALID);
    assert_int_equal(cd->dec("Zm9v", 4, out, 3, &n), IG_OK);
    assert_int_equal(n, 3);
    assert_int_equal(cd->dec(NULL, 0, NULL, 0, &n), IG_OK);
    assert_int_equal(n, 0);
}

/*
 * The two codecs agree: same text for random bytes, and on random strings
 * (alphabet-heavy, with some foreign bytes) the same verdict and bytes.
 */
static void
test_codecs_agree(void **state)
{
    unsigned char in[100], o1[100], o2[100], r[2];
    char t1[200], t2[200];
    size_t len, n1, n2, i;
    enum ig_status s1, s2;
    int k;
    (void)state;

    for (k = 0; k < 20000; k++) {
        randombytes_buf(r, sizeof(r));
        len = r[0] % 100;
        randombytes_buf(in, len);
        n1 = ig_b64_encode(in, len, t1, sizeof(t1));
        n2 = ig_b64_encode_public(in, len, t2, sizeof(t2));
        assert_int_equal(n1, n2);
        assert_string_equal(t1, t2);
        /* Damage one character in a quarter of the cases. */
        if ((r[1] & 3) == 0 && n1 > 0) {
            randombytes_buf(r, sizeof(r));
            i = r[0] % n1;
            t1[i] = (r[1] & 1) ? (char)r[1] : alphabet[r[1] % 64];
        }
        s1 = ig_b64_decode(t1, n1, o1, sizeof(o1), &n1);
        s2 = ig_b64_decode_public(t1, n2, o2, sizeof(o2), &n2);
        assert_int_equal(s1, s2);
        assert_int_equal(n1, n2);
        if (s1 == IG_OK)
            assert_memory_equal(o1, o2, n1);
    }
}

#define BOTH(f)                                                                \
    cmocka_unit_test_prestate(f, &sodium_codec),                               \
        cmocka_unit_test_prestate(f, &public_codec)

int
main(void)
{
    const struct CMUnitTest tests[] = {
        BOTH(test_rfc4648_vectors),
        BOTH(test_url_alphabet),
        BOTH(test_round_trip_lengths),
        BOTH(test_trailing_bits_one_byte),
        BOTH(test_only_canonical_encodings),
        BOTH(test_padding_refused),
        BOTH(test_whitespace_refused),
        BOTH(test_dangling_character_refused),
        BOTH(test_every_foreign_byte_refused),
        BOTH(test_output_too_small_refused),
        cmocka_unit_test(test_codecs_agree),
    };

    if (sodium_init() < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
