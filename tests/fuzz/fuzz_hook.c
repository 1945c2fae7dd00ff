/*
 * fuzz_hook.c - libFuzzer target for the offline half of `intentgate hook
 * claude-code` (cli/cli_hook.h): no network, no signals.
 *
 * The bytes are used three ways:
 *   1. as a PreToolUse event (strict reader), mapped with the built-in
 *      mappings and again with a fixed mapping file. A refusal leaves no
 *      body and a one-line message; a fixed answer is deny/allow/ask with a
 *      reason; an intent body has exactly action (the PDP's grammar),
 *      resource (a non-empty string), params (an object) and context
 *      (agent "claude-code", the event's tool_name), and dumps to JSON the
 *      strict reader takes back with the same intent hash;
 *   2. as a Bash command (cli_hook_shell_split): the program form is
 *      exactly ["sh", "-c", bytes]; the words form is never longer than
 *      the input, and a command without quotes or backslashes that holds
 *      an operator or expansion byte is never given as words;
 *   3. as a mapping file: accepted settings are within their limits.
 * Any broken property aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_hook.h"
#include "ig_hash.h"
#include "ig_json.h"
#include "ig_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fixed_mappings[] =
    "{\"escalate_wait\": 5, \"unmapped\": \"ask\", \"tools\": {"
    "\"Read\": {\"action\": \"file.read\", \"resource\": \"/file_path\", "
    "\"params\": {\"path\": \"/file_path\", \"n\": 1, \"deep\": \"/a/0/b\"}},"
    "\"Grep\": {\"action\": \"file.search\", \"resource\": \"/a~1b/x~0y\", "
    "\"params\": \"/obj\"},"
    "\"WebSearch\": {\"action\": \"http.search\", \"resource\": \"search\"},"
    "\"Glob\": \"allow\", \"Task\": \"ask\", \"Bash\": \"deny\"}}";

static void
check(int ok, const char *what)
{
    if (ok)
        return;
    (void)fprintf(stderr, "fuzz_hook: %s\n", what);
    abort();
}

static void
check_message(const char *msg)
{
    check(msg[0] != '\0', "empty message");
    check(strchr(msg, '\n') == NULL, "message of more than one line");
}

static void
check_body(const json_t *body, const json_t *event)
{
    const json_t *ctx = json_object_get(body, "context");
    const json_t *res = json_object_get(body, "resource");
    char h1[IG_HASH_STRLEN + 1], h2[IG_HASH_STRLEN + 1];
    struct ig_err err;
    json_t *back;
    char *text;

    check(json_object_size(body) == 4, "body keys");
    check(ig_action_valid(
              json_string_value(json_object_get(body, "action")) != NULL
                  ? json_string_value(json_object_get(body, "action"))
                  : ""),
          "action outside the grammar");
    check(json_is_string(res) && json_string_length(res) > 0,
          "resource not a non-empty string");
    check(json_is_object(json_object_get(body, "params")), "params");
    check(json_is_object(ctx), "context");
    check(strcmp(json_string_value(json_object_get(ctx, "agent")),
                 "claude-code") == 0,
          "context.agent");
    check(json_equal(json_object_get(ctx, "tool_name"),
                     json_object_get(event, "tool_name")),
          "context.tool_name");
    text = json_dumps(body, JSON_COMPACT);
    check(text != NULL, "body does not dump");
    check(ig_json_parse(text, strlen(text), &back, &err) == IG_OK,
          "body is not strict JSON");
    check(ig_hash_json(back, h1, &err) == IG_OK &&
              ig_hash_json(body, h2, &err) == IG_OK && strcmp(h1, h2) == 0,
          "body changed through JSON");
    json_decref(back);
    free(text);
}

static void
map_one(const struct cli_hook_map *m, const json_t *event)
{
    struct cli_hook_mapped out;
    struct ig_err err;
    enum ig_status st;

    st = cli_hook_map_event(m, event, &out, &err);
    if (st != IG_OK) {
        check(out.body == NULL, "body left on failure");
        check(st == IG_ERR_INVALID || st == IG_ERR_NOMEM, "status");
        check_message(err.msg);
        return;
    }
    if (out.body == NULL) {
        check(out.fixed == CLI_HOOK_DENY || out.fixed == CLI_HOOK_ALLOW ||
                  out.fixed == CLI_HOOK_ASK,
              "fixed answer out of range");
        check(out.why[0] != '\0', "fixed answer without a reason");
        return;
    }
    check_body(out.body, event);
    cli_hook_mapped_release(&out);
}

static void
split_one(const uint8_t *data, size_t size)
{
    static const char special[] = ";&|<>()$`*?[]{}!\n";
    json_t *argv, *want;
    struct ig_err err;
    size_t i, total = 0, n;
    int program, plain = memchr(data, '\'', size) == NULL &&
                         memchr(data, '"', size) == NULL &&
                         memchr(data, '\\', size) == NULL;
    enum ig_status st;

    st = cli_hook_shell_split((const char *)data, size, &argv, &program, &err);
    if (st != IG_OK) {
        check(argv == NULL, "argv left on failure");
        check(st == IG_ERR_INVALID || st == IG_ERR_NOMEM, "split status");
        check_message(err.msg);
        return;
    }
    if (program) {
        want = json_pack("[s, s, s%]", "sh", "-c", (const char *)data, size);
        check(want != NULL && json_equal(argv, want), "not the sh -c form");
        json_decref(want);
    } else {
        for (i = 0; i < json_array_size(argv); i++) {
            n = json_string_length(json_array_get(argv, i));
            check(strlen(json_string_value(json_array_get(argv, i))) == n,
                  "NUL inside a word");
            total += n;
        }
        check(total <= size, "words longer than the command");
        for (i = 0; plain && i < size; i++)
            check(memchr(special, data[i], sizeof(special) - 1) == NULL,
                  "shell syntax given as words");
    }
    json_decref(argv);
}

static void
load_one(const uint8_t *data, size_t size)
{
    const struct cli_hook_settings *s;
    struct cli_hook_map *m;
    struct ig_err err;
    enum ig_status st;

    st = cli_hook_map_load((const char *)data, size, &m, &err);
    if (st != IG_OK) {
        check(m == NULL, "map left on failure");
        check_message(err.msg);
        return;
    }
    s = cli_hook_map_settings(m);
    check(s->escalate_wait >= 0 && s->escalate_wait <= CLI_HOOK_WAIT_MAX,
          "escalate_wait out of range");
    check(s->timeout >= s->escalate_wait + 2 &&
              s->timeout <= CLI_HOOK_TIMEOUT_MAX,
          "timeout out of range");
    check(s->on_escalate_timeout != CLI_HOOK_ALLOW &&
              s->unmapped != CLI_HOOK_ALLOW,
          "a timeout or unmapped answer that allows");
    cli_hook_map_free(m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct cli_hook_map *builtin, *file;
    struct ig_err err;
    json_t *event;

    if (builtin == NULL) {
        check(cli_hook_map_load(NULL, 0, &builtin, &err) == IG_OK, "defaults");
        check(cli_hook_map_load(fixed_mappings, strlen(fixed_mappings), &file,
                                &err) == IG_OK,
              "the fixed mapping file");
    }
    if (ig_json_parse((const char *)data, size, &event, &err) == IG_OK) {
        map_one(builtin, event);
        map_one(file, event);
        json_decref(event);
    }
    if (size <= 64 * 1024)
        split_one(data, size);
    load_one(data, size);
    return 0;
}
