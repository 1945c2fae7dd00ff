/*
 * test_registry.c - the executor's action registry: a full valid registry,
 * every class of load error (each must name the action and key), and
 * exec_params_check accepting valid params and refusing everything else.
 * JSON below is written with ' for " to keep it readable.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec_registry.h"
#include "ig_json.h"
#include "ig_limits.h"

#define EXAMPLE                                                                \
    "{'actions': {"                                                            \
    " 'payments.refund': {"                                                    \
    "  'handler': 'http', 'credential': 'refund-api',"                         \
    "  'params': {"                                                            \
    "   'amount': {'type': 'number', 'required': true,"                        \
    "              'min': 0.01, 'max': 1000},"                                 \
    "   'currency': {'type': 'string', 'required': true,"                      \
    "                'enum': ['EUR', 'USD']},"                                 \
    "   'order_id': {'type': 'string', 'required': true,"                      \
    "                'max_length': 64, 'pattern': '^[A-Za-z0-9_-]+$'}},"       \
    "  'http': {'method': 'POST', 'url': "                                     \
    "'${INTENTGATE_DEV_UPSTREAM}/refunds',"                                    \
    "           'credential_header': 'Authorization',"                         \
    "           'credential_prefix': 'Bearer ',"                               \
    "           'body_fields': ['amount', 'currency', 'order_id'],"            \
    "           'query_fields': [], 'timeout_ms': 5000}},"                     \
    " 'shell.exec': {"                                                         \
    "  'handler': 'exec',"                                                     \
    "  'params': {'argv': {'type': 'array', 'items': 'string',"                \
    "                      'max_items': 16, 'required': true}},"               \
    "  'exec': {'argv': ['{argv...}'], 'allow': ['ls', 'cat', 'echo'],"        \
    "           'timeout_ms': 10000, 'network': false,"                        \
    "           'sandbox': 'bwrap', 'max_output_bytes': 65536}},"              \
    " 'misc.all': {"                                                           \
    "  'handler': 'exec',"                                                     \
    "  'params': {"                                                            \
    "   'n': {'type': 'integer', 'min': -5, 'max': 5},"                        \
    "   'flag': {'type': 'boolean'},"                                          \
    "   'meta': {'type': 'object', 'max_keys': 2},"                            \
    "   'nums': {'type': 'array', 'items': 'integer', 'max_items': 3,"         \
    "            'min': 0},"                                                   \
    "   'word': {'type': 'string', 'max_length': 3},"                          \
    "   'x': {'type': 'number', 'required': true}},"                           \
    "  'exec': {'argv': ['/bin/echo', '{x}', '--'],"                           \
    "           'env': {'LANG': 'C'}}}}}"

static char tmpl[] = "/tmp/test_registry_XXXXXX";

/* Write json (with ' for ") to a temp file and load it. */
static enum ig_status
load_json(const char *json, struct exec_registry **r, struct ig_err *err)
{
    char path[sizeof(tmpl)];
    size_t i, n = strlen(json);
    char *text = malloc(n + 1);
    enum ig_status st;
    FILE *f;
    int fd;

    assert_non_null(text);
    for (i = 0; i <= n; i++)
        text[i] = json[i] == '\'' ? '"' : json[i];
    memcpy(path, tmpl, sizeof(tmpl));
    fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    st = exec_registry_load(path, r, err);
    (void)unlink(path);
    free(text);
    return st;
}

static json_t *
parse(const char *json)
{
    size_t i, n = strlen(json);
    char *text = malloc(n + 1);
    json_t *v = NULL;

    assert_non_null(text);
    for (i = 0; i <= n; i++)
        text[i] = json[i] == '\'' ? '"' : json[i];
    assert_int_equal(ig_json_parse(text, n, &v, NULL), IG_OK);
    free(text);
    return v;
}

static int
setup(void **state)
{
    struct exec_registry *r = NULL;
    struct ig_err err;

    assert_int_equal(setenv("INTENTGATE_DEV_UPSTREAM", "http://127.0.0.1:9", 1),
                     0);
    if (load_json(EXAMPLE, &r, &err) != IG_OK)
        fail_msg("example registry: %s", err.msg);
    *state = r;
    return 0;
}

static int
teardown(void **state)
{
    exec_registry_free(*state);
    exec_registry_free(NULL);
    return 0;
}

static void
test_valid_registry(void **state)
{
    const struct exec_registry *r = *state;
    const struct exec_action *a = exec_registry_find(r, "payments.refund");
    const json_t *s;

    assert_int_equal(exec_registry_size(r), 3);
    assert_non_null(a);
    assert_string_equal(exec_action_name(a), "payments.refund");
    assert_int_equal(exec_action_handler(a), EXEC_HANDLER_HTTP);
    assert_string_equal(exec_action_credential(a), "refund-api");
    s = exec_action_settings(a);
    assert_string_equal(json_string_value(json_object_get(s, "url")),
                        "http://127.0.0.1:9/refunds");
    assert_true(json_number_value(json_object_get(s, "max_response_bytes")) ==
                65536);
    a = exec_registry_find(r, "shell.exec");
    assert_non_null(a);
    assert_int_equal(exec_action_handler(a), EXEC_HANDLER_EXEC);
    assert_null(exec_action_credential(a));
    a = exec_registry_find(r, "misc.all");
    s = exec_action_settings(a);
    assert_string_equal(json_string_value(json_object_get(s, "sandbox")),
                        "bwrap");
    assert_true(json_is_false(json_object_get(s, "network")));
    assert_true(json_number_value(json_object_get(s, "timeout_ms")) == 10000);
    assert_null(exec_registry_find(r, "payments"));
    assert_null(exec_registry_find(r, "payments.refund2"));
    assert_null(exec_registry_find(r, ""));
}

/* Each registry must fail to load with a message containing want. */
struct bad_case {
    const char *json;
    const char *want;
};

#define ONE(params, settings)                                                  \
    "{'actions': {'a.b': {'handler': 'exec', 'params': {" params "},"          \
    " 'exec': {" settings "}}}}"
#define HTTP(params, settings)                                                 \
    "{'actions': {'a.b': {'handler': 'http', 'params': {" params "},"          \
    " 'http': {" settings "}}}}"
#define ARGV "'argv': ['ls']"
#define S "'s': {'type': 'string', 'required': true}"

static const struct bad_case bad_cases[] = {
    {"[]", "must be a JSON object"},
    {"{'actions': {}, 'x': 1}", ": x: unknown key"},
    {"{'actions': []}", "actions: must be an object"},
    {"{'actions': {'A.b': {}}}", "action \"A.b\": invalid action name"},
    {"{'actions': {'1a': {}}}", "invalid action name"},
    {"{'actions': {'a b': {}}}", "invalid action name"},
    {"{'actions': {'a.b': {'handler': 'exec', 'exec': {" ARGV "},"
     " 'extra': 1}}}",
     "action \"a.b\": extra: unknown key"},
    {"{'actions': {'a.b': {'handler': 'ftp'}}}",
     "action \"a.b\": handler: must be"},
    {"{'actions': {'a.b': {'handler': 'exec'}}}", "exec: missing"},
    {"{'actions': {'a.b': {'handler': 'http'}}}", "http: missing"},
    {"{'actions': {'a.b': {'handler': 'exec', 'exec': {" ARGV "},"
     " 'http': {}}}}",
     "http: not allowed"},
    {"{'actions': {'a.b': {'handler': 'exec', 'credential': 'Bad!',"
     " 'exec': {" ARGV "}}}}",
     "credential: must be a secret name"},
    {ONE("'s': {'type': 'string', 'pattern': '(['}", ARGV),
     "params.s.pattern: does not compile"},
    {ONE("'s': {'type': 'str'}", ARGV), "params.s.type: must be one of"},
    {ONE("'s': {'type': 'string', 'colour': 1}", ARGV),
     "params.s.colour: unknown key"},
    {ONE("'s': {'type': 'string', 'min': 1}", ARGV),
     "params.s: \"min\" is not allowed for type string"},
    {ONE("'n': {'type': 'number', 'min': 'x'}", ARGV),
     "params.n.min: must be a number"},
    {ONE("'n': {'type': 'number', 'min': 5, 'max': 1}", ARGV),
     "params.n.max: must not be less than min"},
    {ONE("'s': {'type': 'string', 'required': 1}", ARGV),
     "params.s.required: must be true or false"},
    {ONE("'s': {'type': 'string', 'max_length': 0}", ARGV),
     "params.s.max_length: must be between"},
    {ONE("'s': {'type': 'string', 'max_length': 1.5}", ARGV),
     "params.s.max_length: must be an integer"},
    {ONE("'s': {'type': 'string', 'enum': []}", ARGV),
     "params.s.enum: must be a non-empty array"},
    {ONE("'s': {'type': 'string', 'enum': [1]}", ARGV), "params.s.enum"},
    {ONE("'l': {'type': 'array'}", ARGV), "params.l.items: must be one of"},
    {ONE("'l': {'type': 'array', 'items': 'object'}", ARGV), "params.l.items"},
    {ONE("'l': {'type': 'array', 'items': 'string', 'max_items': 99999}", ARGV),
     "params.l.max_items: must be between"},
    {ONE("'o': {'type': 'object', 'max_keys': -1}", ARGV),
     "params.o.max_keys: must be between"},
    {ONE("'a{b': {'type': 'string'}", ARGV), "invalid name"},
    {ONE("", "'argv': []"), "exec.argv: must be a non-empty array"},
    {ONE("", "'argv': [1]"), "exec.argv[0]: must be a string"},
    {ONE(S, "'argv': ['ls', '--out={s}']"),
     "exec.argv[1]: a placeholder must be a whole element"},
    {ONE(S, "'argv': ['ls', '{s}x']"), "placeholder must be a whole"},
    {ONE(S, "'argv': ['ls', '{nope}']"),
     "exec.argv[1]: placeholder {nope} is not a declared parameter"},
    {ONE(S, "'argv': ['ls', '{s...}']"), "must name an array-of-strings"},
    {ONE("'s': {'type': 'string'}", "'argv': ['ls', '{s}']"),
     "must name a required parameter"},
    {ONE("'b': {'type': 'boolean', 'required': true}", "'argv': ['ls', '{b}']"),
     "wrong type"},
    {ONE(S, "'argv': ['{s}']"), "exec.allow: required when argv[0]"},
    {ONE("", "'argv': ['rm'], 'allow': ['ls']"),
     "exec.allow: does not allow argv[0]"},
    {ONE("", ARGV ", 'timeout_ms': 0"), "exec.timeout_ms: must be between"},
    {ONE("", ARGV ", 'timeout_ms': 600001"), "exec.timeout_ms"},
    {ONE("", ARGV ", 'max_output_bytes': 1e12"), "exec.max_output_bytes"},
    {ONE("", ARGV ", 'network': 'yes'"), "exec.network: must be true"},
    {ONE("", ARGV ", 'sandbox': 'docker'"), "exec.sandbox: must be"},
    {ONE("", ARGV ", 'env': {'A': 1}"), "exec.env"},
    {ONE("", ARGV ", 'env': {'1A': 'x'}"), "exec.env: bad variable name"},
    {ONE("", ARGV ", 'shell': true"), "exec.shell: unknown key"},
    {ONE("", ARGV ", 'binds': {}"), "exec.binds: must be an array"},
    {ONE("", ARGV ", 'binds': ['/srv']"), "exec.binds[0]: must be an object"},
    {ONE("", ARGV ", 'binds': [{'src': '/usr', 'dest': '/x', 'colour': 1}]"),
     "exec.binds[0].colour: unknown key"},
    {ONE("", ARGV ", 'binds': [{'src': 'usr', 'dest': '/x'}]"),
     "src must be an absolute path"},
    {ONE("", ARGV ", 'binds': [{'src': '/usr/../etc', 'dest': '/x'}]"),
     "src must be an absolute path without . or .."},
    {ONE("", ARGV ", 'binds': [{'src': '/usr//bin', 'dest': '/x'}]"),
     "src must be an absolute path"},
    {ONE("", ARGV ", 'binds': [{'src': '/', 'dest': '/x'}]"),
     "src must be an absolute path"},
    {ONE("", ARGV ", 'binds': [{'src': '/no/such/ig-dir', 'dest': '/x'}]"),
     "src /no/such/ig-dir does not exist"},
    {ONE("", ARGV ", 'binds': [{'src': '/usr', 'dest': '/'}]"),
     "dest must be an absolute path other than /"},
    {ONE("", ARGV ", 'binds': [{'src': '/usr', 'dest': '/x/./y'}]"),
     "dest must be an absolute path"},
    {ONE("", ARGV ", 'binds': [{'src': '/usr', 'dest': '/usr/bin'}]"),
     "dest /usr/bin would replace /usr"},
    {ONE("", ARGV ", 'binds': [{'src': '/usr', 'dest': '/proc/1'}]"),
     "would replace /proc"},
    {ONE("", ARGV ", 'binds': [{'src': '/usr', 'dest': '/scratch'}]"),
     "would replace /scratch"},
    {ONE("", ARGV ", 'binds': [{'src': '/usr', 'dest': '/etc/passwd'}]"),
     "would replace /etc/passwd"},
    {ONE("", ARGV ", 'binds': [{'src': '/usr', 'dest': '/etc'}]"),
     "would replace /etc"},
    {ONE("", ARGV ", 'binds': [{'src': '/usr', 'dest': '/x', 'mode': 'w'}]"),
     "mode must be"},
    {ONE("", ARGV ", 'binds': [{'src': '/usr', 'dest': '/x'},"
                  " {'src': '/usr', 'dest': '/x/y'}]"),
     "dest /x/y overlaps dest /x"},
    {ONE("", ARGV ", 'sandbox': 'none', 'binds': []"),
     "exec.binds: needs a sandbox"},
    {ONE("", ARGV ", 'scratch_bytes': 1"), "exec.scratch_bytes: must be"},
    {ONE("", ARGV ", 'scratch_bytes': 1e13"), "exec.scratch_bytes"},
    {ONE("", "'argv': ['${IG_TEST_SURELY_UNSET_VAR}']"),
     "exec.argv[0]: environment variable IG_TEST_SURELY_UNSET_VAR is not set"},
    {ONE("", "'argv': ['${IG TEST}']"), "exec.argv[0]: malformed ${"},
    {ONE("", "'argv': ['x${']"), "malformed ${"},
    {ONE("", "'argv': ['${}']"), "malformed ${"},
    {HTTP("", "'method': 'GET'"), "http: \"url\" must be a string"},
    {HTTP("", "'method': 'TRACE', 'url': 'http://h/'"), "http.method"},
    {HTTP("", "'method': 'GET', 'url': 'ftp://h/'"),
     "http.url: must start with"},
    {HTTP("", "'method': 'GET', 'url': 'http:///x'"), "http.url: needs a host"},
    {HTTP("", "'method': 'GET', 'url': 'http://h/ x'"), "http.url"},
    {HTTP(S, "'method': 'GET', 'url': 'http://{s}/'"), "http.url"},
    {HTTP(S, "'method': 'GET', 'url': 'http://h/?q={s}'"),
     "http.url: placeholders only in the path"},
    {HTTP(S, "'method': 'GET', 'url': 'http://h/{t}'"),
     "http.url: placeholder {t} is not a declared parameter"},
    {HTTP(S, "'method': 'GET', 'url': 'http://h/{s'"), "unmatched {"},
    {HTTP("'n': {'type': 'number', 'required': true}",
          "'method': 'GET', 'url': 'http://h/{n}'"),
     "wrong type"},
    {HTTP(S, "'method': 'GET', 'url': 'http://h/', 'body_fields': ['t']"),
     "http.body_fields: element 0 is not a declared parameter"},
    {HTTP(S, "'method': 'GET', 'url': 'http://h/', 'query_fields': 's'"),
     "http.query_fields"},
    {HTTP("", "'method': 'GET', 'url': 'http://h/', 'timeout_ms': 60001"),
     "http.timeout_ms: must be between 1 and 60000"},
    {HTTP("", "'method': 'GET', 'url': 'http://h/', 'max_response_bytes': 0"),
     "http.max_response_bytes"},
    {HTTP("", "'method': 'GET', 'url': 'http://h/', "
              "'credential_header': 'X-Key'"),
     "the action has no credential"},
    {HTTP("", "'method': 'GET', 'url': 'http://h/', 'follow': true"),
     "http.follow: unknown key"},
    {"{'actions': {'a.b': {'handler': 'exec', 'params': [],"
     " 'exec': {" ARGV "}}}}",
     "params: must be an object"},
    {"{'actions': {'a.b': {'handler': 'exec', 'exec': []}}}",
     "exec: must be an object"},
};

static void
test_load_errors(void **state)
{
    struct exec_registry *r;
    struct ig_err err;
    size_t i;
    (void)state;

    for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        r = NULL;
        memset(&err, 0, sizeof(err));
        if (load_json(bad_cases[i].json, &r, &err) != IG_ERR_INVALID ||
            r != NULL || strstr(err.msg, bad_cases[i].want) == NULL)
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, err.msg,
                     bad_cases[i].want);
        if (strncmp(err.msg, "/tmp/test_registry_", 19) != 0)
            fail_msg("case %zu: message does not name the file: %s", i,
                     err.msg);
    }
}

#define GIT(repo) "{'actions': {}, 'git': {" repo "}}"
#define REPO "'url': 'https://git.example/acme/app.git', 'credential': 'app'"

/* The git gateway's repositories: both credential styles, defaults,
   lookups, and every refusal naming the alias and key. */
static void
test_git_repos(void **state)
{
    static const struct {
        const char *json, *want;
    } bad[] = {
        {GIT("'Demo': {" REPO ", 'credential_user': 'u'}"),
         "invalid git alias"},
        {GIT("'..': {" REPO ", 'credential_user': 'u'}"), "invalid git alias"},
        {GIT("'d': {" REPO "}"), "exactly one of credential_user"},
        {GIT("'d': {" REPO ", 'credential_user': 'u', "
             "'credential_header': 'X-Token'}"),
         "exactly one of credential_user"},
        {GIT("'d': {" REPO ", 'credential_user': 'u:v'}"), "credential_user"},
        {GIT("'d': {" REPO ", 'credential_header': 'X Token'}"),
         "credential_header"},
        {GIT("'d': {'url': 'https://u:p@git.example/a', 'credential': 'a', "
             "'credential_user': 'u'}"),
         "url: needs a host, without userinfo"},
        {GIT("'d': {'url': 'https://git.example/a?x=1', 'credential': 'a', "
             "'credential_user': 'u'}"),
         "url: must not have a query"},
        {GIT("'d': {'url': 'file:///srv/a.git', 'credential': 'a', "
             "'credential_user': 'u'}"),
         "url: must start with http"},
        {GIT("'d': {'url': 'https://git.example/a', 'credential_user': 'u'}"),
         "credential: missing"},
        {GIT("'d': {" REPO ", 'credential_user': 'u', 'max_push_bytes': 0}"),
         "max_push_bytes"},
        {GIT("'d': {" REPO ", 'credential_user': 'u', 'follow': true}"),
         "follow: unknown key"},
        {GIT("'d': {" REPO ", 'credential_user': 'u', "
             "'fast_forward_only': 1}"),
         "fast_forward_only: must be true or false"},
        {"{'actions': {}, 'git': []}", "git: must be an object"},
    };
    struct exec_registry *r = NULL;
    const struct exec_git_repo *g;
    struct ig_err err;
    size_t i;
    (void)state;

    if (load_json(GIT("'b': {" REPO ", 'credential_header': 'PRIVATE-TOKEN'},"
                      " 'a': {" REPO ", 'credential_user': 'x-access-token',"
                      " 'max_push_bytes': 1024, 'timeout_ms': 1000}"),
                  &r, &err) != IG_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(exec_registry_git_size(r), 2);
    assert_string_equal(exec_registry_git_at(r, 0)->alias, "a");
    assert_null(exec_registry_git(r, "c"));
    g = exec_registry_git(r, "a");
    assert_non_null(g);
    assert_string_equal(g->cred_user, "x-access-token");
    assert_null(g->cred_header);
    assert_true(g->max_push_bytes == 1024);
    assert_int_equal(g->timeout_ms, 1000);
    g = exec_registry_git(r, "b");
    assert_string_equal(g->cred_header, "PRIVATE-TOKEN");
    assert_string_equal(g->cred_prefix, "");
    assert_true(g->max_push_bytes == IG_EXEC_GIT_PUSH_DEFAULT_BYTES);
    assert_int_equal(g->timeout_ms, IG_EXEC_GIT_TIMEOUT_DEFAULT_MS);
    exec_registry_free(r);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r = NULL;
        memset(&err, 0, sizeof(err));
        if (load_json(bad[i].json, &r, &err) != IG_ERR_INVALID || r != NULL ||
            strstr(err.msg, bad[i].want) == NULL)
            fail_msg("git case %zu: got \"%s\", want \"%s\"", i, err.msg,
                     bad[i].want);
    }
}

#define MCP(srv) "{'actions': {}, 'mcp': {" srv "}}"
#define STDIO "'transport': 'stdio', 'command': ['/usr/bin/node', '/opt/s.js']"

/* The MCP gateway's servers: both transports, defaults, lookups, and every
   refusal naming the alias and key. */
static void
test_mcp_servers(void **state)
{
    static const struct {
        const char *json, *want;
    } bad[] = {
        {MCP("'Fs': {" STDIO "}"), "invalid MCP server alias"},
        {MCP("'f_s': {" STDIO "}"), "invalid MCP server alias"},
        {MCP("'f.s': {" STDIO "}"), "invalid MCP server alias"},
        {MCP("'fs': {'command': ['/bin/x']}"), "transport: missing"},
        {MCP("'fs': {'transport': 'ws', 'command': ['/bin/x']}"),
         "transport: must be"},
        {MCP("'fs': {'transport': 'stdio', 'command': 'node s.js'}"),
         "command: must be an array"},
        {MCP("'fs': {'transport': 'stdio', 'command': ['node']}"),
         "command: the program must be an absolute path"},
        {MCP("'fs': {" STDIO ", 'credential': 'c'}"),
         "give both credential and credential_env"},
        {MCP("'fs': {" STDIO ", 'credential': 'c', 'credential_env': 'T', "
             "'env': {'T': 'x'}}"),
         "the credential's variable"},
        {MCP("'fs': {" STDIO ", 'env': {'A=B': 'x'}}"), "env: A=B"},
        {MCP("'fs': {" STDIO ", 'sandbox': 'docker'}"), "sandbox: must be"},
        {MCP("'fs': {" STDIO ", 'sandbox': 'none', "
             "'binds': [{'src': '/usr', 'dest': '/u'}]}"),
         "binds: needs a sandbox"},
        {MCP("'fs': {" STDIO ", 'url': 'http://h/mcp'}"),
         "are for \"transport\": \"http\""},
        {MCP("'gh': {'transport': 'http', 'url': 'http://u:p@h/mcp'}"),
         "url: needs a host, without userinfo"},
        {MCP("'gh': {'transport': 'http', 'url': 'http://h/mcp', "
             "'command': ['/bin/x']}"),
         "command: is for \"transport\": \"stdio\""},
        {MCP("'gh': {'transport': 'http', 'url': 'http://h/mcp', "
             "'credential_header': 'X-Key'}"),
         "credential_header: needs a credential"},
        {MCP("'fs': {" STDIO ", 'tools': {'read': {'resource': 'path'}}}"),
         "must be a JSON pointer"},
        {MCP("'fs': {" STDIO ", 'tools': {'read': {'uri': '/path'}}}"),
         "must be {\"resource\": POINTER}"},
        {MCP("'fs': {" STDIO ", 'timeout_ms': 0}"), "timeout_ms"},
        {MCP("'fs': {" STDIO ", 'max_reply_bytes': 1e9}"), "max_reply_bytes"},
        {MCP("'fs': {" STDIO ", 'names': 'short'}"), "names: must be"},
        {MCP("'a': {" STDIO ", 'names': 'bare'}, 'b': {" STDIO
             ", 'names': 'bare'}"),
         "at most one server may have"},
        {MCP("'fs': {" STDIO ", 'shell': true}"), "shell: unknown key"},
        {"{'actions': {}, 'mcp': []}", "mcp: must be an object"},
    };
    struct exec_registry *r = NULL;
    const struct exec_mcp_server *m;
    struct ig_err err;
    size_t i;
    (void)state;

    if (load_json(MCP("'gh': {'transport': 'http', 'url': 'http://h/mcp', "
                      "'credential': 'gh'}, 'fs': {" STDIO ", 'credential': "
                      "'c', 'credential_env': 'TOKEN', 'names': 'bare'}"),
                  &r, &err) != IG_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(exec_registry_mcp_size(r), 2);
    assert_string_equal(exec_registry_mcp_at(r, 0)->alias, "fs");
    assert_null(exec_registry_mcp(r, "x"));
    m = exec_registry_mcp(r, "fs");
    assert_non_null(m);
    assert_false(m->http);
    assert_true(m->sandbox);
    assert_true(m->bare);
    assert_int_equal(m->argc, 2);
    assert_string_equal(m->cred_env, "TOKEN");
    assert_int_equal(m->timeout_ms, IG_EXEC_MCP_TIMEOUT_DEFAULT_MS);
    m = exec_registry_mcp(r, "gh");
    assert_true(m->http);
    assert_string_equal(m->cred_header, "Authorization");
    assert_string_equal(m->cred_prefix, "Bearer ");
    exec_registry_free(r);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r = NULL;
        memset(&err, 0, sizeof(err));
        if (load_json(bad[i].json, &r, &err) != IG_ERR_INVALID || r != NULL ||
            strstr(err.msg, bad[i].want) == NULL)
            fail_msg("mcp case %zu: got \"%s\", want \"%s\"", i, err.msg,
                     bad[i].want);
    }
}

static void
test_load_file_errors(void **state)
{
    struct exec_registry *r = NULL;
    struct ig_err err;
    (void)state;

    assert_int_equal(exec_registry_load("/nonexistent/reg.json", &r, &err),
                     IG_ERR_IO);
    assert_null(r);
    assert_int_equal(exec_registry_load("/tmp", &r, &err), IG_ERR_IO);
    assert_int_equal(load_json("{'actions': {", &r, &err), IG_ERR_INVALID);
    assert_null(r);
    assert_int_equal(load_json("{'actions': {}, 'actions': {}}", &r, &err),
                     IG_ERR_INVALID);
}

/* Each params object must be accepted (want NULL) or refused with want. */
struct params_case {
    const char *action;
    const char *params;
    const char *want;
};

static const struct params_case params_cases[] = {
    {"payments.refund",
     "{'amount': 12.5, 'currency': 'EUR', 'order_id': 'A-1_b'}", NULL},
    {"payments.refund", "{'amount': 1000, 'currency': 'USD', 'order_id': 'x'}",
     NULL},
    {"shell.exec", "{'argv': ['ls', '-l']}", NULL},
    {"shell.exec", "{'argv': []}", NULL},
    {"misc.all",
     "{'x': 1, 'n': -5, 'flag': true, 'meta': {'a': 1, 'b': [1]},"
     " 'nums': [0, 3], 'word': 'h\\u00e9\\u00e9'}",
     NULL},
    {"misc.all", "{'x': -1e300}", NULL},
    {"payments.refund", "[]", "params: must be an object"},
    {"payments.refund", "'x'", "params: must be an object"},
    {"payments.refund",
     "{'amount': 1, 'currency': 'EUR', 'order_id': 'x', 'tip': 1}",
     "unknown parameter \"tip\""},
    {"payments.refund", "{'amount': 1, 'currency': 'EUR'}",
     "missing required parameter \"order_id\""},
    {"payments.refund", "{'amount': '1', 'currency': 'EUR', 'order_id': 'x'}",
     "parameter \"amount\": must be a number"},
    {"payments.refund", "{'amount': 0, 'currency': 'EUR', 'order_id': 'x'}",
     "parameter \"amount\": less than min"},
    {"payments.refund",
     "{'amount': 1000.01, 'currency': 'EUR', 'order_id': 'x'}",
     "parameter \"amount\": more than max"},
    {"payments.refund", "{'amount': 1, 'currency': 'GBP', 'order_id': 'x'}",
     "parameter \"currency\": not one of the enum"},
    {"payments.refund", "{'amount': 1, 'currency': 'eur', 'order_id': 'x'}",
     "enum"},
    {"payments.refund",
     "{'amount': 1, 'currency': 'EUR', 'order_id': 'a;rm -rf /'}",
     "parameter \"order_id\": does not match pattern"},
    {"payments.refund", "{'amount': 1, 'currency': 'EUR', 'order_id': ''}",
     "does not match pattern"},
    {"payments.refund",
     "{'amount': 1, 'currency': 'EUR', 'order_id': 'ab\\u0000;x'}",
     "must not contain a NUL"},
    {"payments.refund",
     "{'amount': 1, 'currency': 'EUR', 'order_id': "
     "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'}",
     "parameter \"order_id\": longer than max_length 64"},
    {"payments.refund", "{'amount': 1, 'currency': 1, 'order_id': 'x'}",
     "parameter \"currency\": must be a string"},
    {"shell.exec", "{}", "missing required parameter \"argv\""},
    {"shell.exec", "{'argv': 'ls'}", "parameter \"argv\": must be an array"},
    {"shell.exec", "{'argv': ['ls', 1]}",
     "parameter \"argv\"[1]: must be a string"},
    {"shell.exec",
     "{'argv': ['1','2','3','4','5','6','7','8','9','10','11','12','13',"
     "'14','15','16','17']}",
     "more than max_items 16"},
    {"misc.all", "{'x': 1, 'n': 1.5}", "parameter \"n\": must be an integer"},
    {"misc.all", "{'x': 1, 'n': 6}", "parameter \"n\": more than max"},
    {"misc.all", "{'x': 1, 'n': '1'}", "parameter \"n\": must be an integer"},
    {"misc.all", "{'x': 1, 'nums': [1, 2.5]}",
     "parameter \"nums\"[1]: must be an integer"},
    {"misc.all", "{'x': 1, 'nums': [1, -1]}", "parameter \"nums\"[1]: less"},
    {"misc.all", "{'x': 1, 'nums': [1, 2, 3, 4]}", "max_items 3"},
    {"misc.all", "{'x': 1, 'flag': 1}",
     "parameter \"flag\": must be a boolean"},
    {"misc.all", "{'x': 1, 'meta': []}", "parameter \"meta\": must be an obj"},
    {"misc.all", "{'x': 1, 'meta': {'a': 1, 'b': 2, 'c': 3}}", "max_keys 2"},
    {"misc.all", "{'x': 1, 'word': 'h\\u00e9\\u00e9\\u00e9'}",
     "parameter \"word\": longer than max_length 3"},
    {"misc.all", "{'x': null}", "parameter \"x\": must be a number"},
    {"misc.all", "{'x': true}", "must be a number"},
};

static void
test_params(void **state)
{
    const struct exec_registry *r = *state;
    const struct exec_action *a;
    struct ig_err err;
    enum ig_status st;
    json_t *p;
    size_t i;

    for (i = 0; i < sizeof(params_cases) / sizeof(params_cases[0]); i++) {
        const struct params_case *c = &params_cases[i];
        a = exec_registry_find(r, c->action);
        assert_non_null(a);
        p = parse(c->params);
        memset(&err, 0, sizeof(err));
        st = exec_params_check(a, p, &err);
        json_decref(p);
        if (c->want == NULL && st != IG_OK)
            fail_msg("case %zu: refused: %s", i, err.msg);
        if (c->want != NULL &&
            (st != IG_ERR_INVALID || strstr(err.msg, c->want) == NULL))
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, err.msg, c->want);
    }
}

static void
test_params_edge(void **state)
{
    const struct exec_registry *r = *state;
    const struct exec_action *a = exec_registry_find(r, "misc.all");
    struct ig_err err;
    char big[300];
    json_t *p;

    /* Numbers from other sources than the strict reader: json_integer. */
    p = json_pack("{s:I, s:I}", "x", (json_int_t)1, "n", (json_int_t)3);
    assert_int_equal(exec_params_check(a, p, &err), IG_OK);
    json_decref(p);
    p = json_pack("{s:f}", "x", 9007199254740994.0);
    assert_int_equal(exec_params_check(a, p, &err), IG_OK);
    json_decref(p);
    p = json_pack("{s:i, s:f}", "x", 1, "n", 9007199254740994.0);
    assert_int_equal(exec_params_check(a, p, &err), IG_ERR_INVALID);
    json_decref(p);
    assert_int_equal(exec_params_check(a, NULL, &err), IG_ERR_INVALID);
    assert_int_equal(exec_params_check(NULL, NULL, &err), IG_ERR_INVALID);
    /* A long unknown name is echoed at most 64 characters. */
    memset(big, 'k', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    p = json_pack("{s:i, s:i}", "x", 1, big, 1);
    assert_int_equal(exec_params_check(a, p, &err), IG_ERR_INVALID);
    assert_true(strlen(err.msg) < 100);
    json_decref(p);
}

/* A bind may not show the sandbox any of the executor's own files: not
   one of them, not a directory holding one, not a path inside one. */
static void
test_binds_cover_own_files(void **state)
{
    char dir[] = "/tmp/test_binds_XXXXXX", sub[64], key[64], json[512];
    const char *own[2];
    struct exec_registry *r = NULL;
    struct ig_err err;
    FILE *f;

    (void)state;
    assert_non_null(mkdtemp(dir));
    (void)snprintf(sub, sizeof(sub), "%s/repo", dir);
    (void)snprintf(key, sizeof(key), "%s/secrets.key", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    f = fopen(key, "w");
    assert_non_null(f);
    assert_int_equal(fclose(f), 0);
    (void)snprintf(json, sizeof(json),
                   "{'actions': {'a.b': {'handler': 'exec', 'exec': {"
                   "'argv': ['ls'], 'binds': [{'src': '%s', 'dest': "
                   "'/repo'}]}}}}",
                   dir);
    assert_int_equal(load_json(json, &r, &err), IG_OK);
    own[0] = key; /* inside the bind */
    assert_int_equal(exec_registry_check_binds(r, own, 1, &err),
                     IG_ERR_INVALID);
    assert_non_null(strstr(err.msg, "secrets.key"));
    own[0] = sub; /* a directory inside the bind */
    assert_int_equal(exec_registry_check_binds(r, own, 1, &err),
                     IG_ERR_INVALID);
    own[0] = "/tmp"; /* the bind lies inside a data directory */
    assert_int_equal(exec_registry_check_binds(r, own, 1, &err),
                     IG_ERR_INVALID);
    own[0] = "/var/lib/ig-elsewhere";
    own[1] = "/tmp/test_binds_other";
    assert_int_equal(exec_registry_check_binds(r, own, 2, &err), IG_OK);
    exec_registry_free(r);
    /* The bind of the sub-directory alone is fine next to the key. */
    (void)snprintf(json, sizeof(json),
                   "{'actions': {'a.b': {'handler': 'exec', 'exec': {"
                   "'argv': ['ls'], 'binds': [{'src': '%s', 'dest': "
                   "'/repo', 'mode': 'rw'}]}}}}",
                   sub);
    assert_int_equal(load_json(json, &r, &err), IG_OK);
    own[0] = key;
    assert_int_equal(exec_registry_check_binds(r, own, 1, &err), IG_OK);
    exec_registry_free(r);
    (void)unlink(key);
    (void)rmdir(sub);
    (void)rmdir(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_valid_registry, setup, teardown),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_git_repos),
        cmocka_unit_test(test_mcp_servers),
        cmocka_unit_test(test_load_file_errors),
        cmocka_unit_test(test_binds_cover_own_files),
        cmocka_unit_test_setup_teardown(test_params, setup, teardown),
        cmocka_unit_test_setup_teardown(test_params_edge, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
