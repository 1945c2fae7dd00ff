#!/usr/bin/env bash
# tests/cli/test_policy_eval.sh - `intentgate policy eval`: the explain
# output for each example policy in policies/bundle (an intent each one
# decides, and the trace line naming it), the JSON form, --settings and
# --count, ERROR and LIMIT entries, hostile text shown escaped, and every
# bad input refused with exit 2 and one line on stderr.
#   test_policy_eval.sh INTENTGATE BUNDLE_DIR
set -u
ig=$1
bundle=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() {
    echo "FAIL $*" >&2
    sed 's/^/  | /' "$tmp/out" "$tmp/err" >&2
    fails=$((fails + 1))
}

run() { # run STATUS DESCRIPTION CMD... (stdout in out, stderr in err)
    local want=$1 what=$2
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    if [ "$got" -ne "$want" ]; then
        fail "$what: exit $got, want $want"
        return 1
    fi
    return 0
}

has() { # has DESCRIPTION EXTENDED_REGEX (a line of out)
    if grep -Eq -- "$2" "$tmp/out"; then
        echo "ok   $1"
    else
        fail "$1: no line matching /$2/"
    fi
}

# explain FILE VERDICT REASON INTENT_JSON [OPTION...]: the decision's
# verdict, and FILE's trace line "  FILE  VERDICT  REASON  N us".
explain() {
    local file=$1 verdict=$2 reason=$3 intent=$4
    shift 4
    printf '%s' "$intent" >"$tmp/intent.json"
    run 0 "$file" "$ig" policy eval --bundle "$bundle" \
        --intent "$tmp/intent.json" --trace "$@" || return
    grep -Eq "^decision  $verdict\$" "$tmp/out" ||
        { fail "$file: decision is not $verdict"; return; }
    has "$file: $verdict $reason" \
        "^  ${file//./\\.} +$verdict +$reason  [0-9]+ us\$"
}

settings='{"project_roots":"/work/project","quota_per_minute":600}'
printf '%s' "$settings" >"$tmp/settings.json"

# ---- one intent for each example policy ----
explain db.lua ESCALATE PRODUCTION_WRITE \
    '{"action":"db.write","resource":"prod/orders","params":{}}'
explain file.lua BLOCK SENSITIVE_PATH \
    '{"action":"file.read","resource":"/work/project/.ssh/id_rsa"}' \
    --settings "$tmp/settings.json"
explain file.lua ALLOW - \
    '{"action":"file.write","resource":"/work/project/src/a.c"}' \
    --settings "$tmp/settings.json"
explain git.lua BLOCK PROTECTED_BRANCH \
    '{"action":"git.push","resource":"github.com/acme/app",
      "params":{"refs":["refs/heads/main"]}}'
explain http.lua ESCALATE HOST_NOT_ALLOWLISTED \
    '{"action":"http.request","resource":"https://unknown.example/x"}'
explain mcp.lua ESCALATE MCP_TOOL_NOT_ALLOWLISTED \
    '{"action":"mcp.jira.create_issue","resource":"mcp://jira"}'
explain mcp_fs.lua ESCALATE MCP_FS_WRITE \
    '{"action":"mcp.fs.write_file","resource":"/work/project/a.txt"}'
explain mcp_github.lua ESCALATE MCP_GITHUB_RELEASE \
    '{"action":"mcp.github.merge_pull_request","resource":"acme/app"}'
explain quota.lua BLOCK QUOTA_EXCEEDED \
    '{"action":"payments.refund","resource":"o/1","params":{"amount":5}}' \
    --count "intents:agent:policy-eval=600"
explain refund.lua BLOCK AMOUNT_OVER_LIMIT \
    '{"action":"payments.refund","resource":"o/1","params":{"amount":5000}}'
explain refund.lua ESCALATE REFUND_NEEDS_APPROVAL \
    '{"action":"payments.refund","resource":"o/1","params":{"amount":500}}'
explain shell.lua BLOCK DANGEROUS_COMMAND \
    '{"action":"shell.exec","resource":"host","params":{"argv":["sudo","ls"]}}'

# The quota under its limit has no opinion: left out of the trace.
printf '%s' '{"action":"payments.refund","params":{"amount":5}}' \
    >"$tmp/small.json"
run 0 "under quota" "$ig" policy eval --bundle "$bundle" \
    --intent "$tmp/small.json" --trace --count "intents:agent:policy-eval=599"
if grep -q 'quota\.lua' "$tmp/out"; then
    fail "quota.lua under its limit is in the trace"
else
    echo "ok   nil left out of the trace"
fi
# Approved at quorum: the refund is allowed (the approval object).
printf '%s' '{"action":"payments.refund","params":{"amount":500},
  "approval":{"approval_id":"a-1","groups":["finance"],"quorum":1,
  "approvals":[{"approver":"ann","groups":["finance"],"comment":"",
  "at":1}]}}' >"$tmp/approved.json"
run 0 "approved" "$ig" policy eval --bundle "$bundle" \
    --intent "$tmp/approved.json" --trace
has "approved: re-evaluation allows" '^  refund\.lua +ALLOW +-  [0-9]+ us$'

# Without --trace: the decision only.
run 0 "no trace" "$ig" policy eval --bundle "$bundle" \
    --intent "$tmp/small.json"
if grep -q '^trace' "$tmp/out"; then fail "trace printed without --trace"; \
else echo "ok   no trace without --trace"; fi
has "no trace: decision" '^decision  ALLOW$'

# stdin, and --format json.
run 0 "json" "$ig" policy eval --bundle "$bundle" --intent - --trace \
    --format json <"$tmp/intent.json"
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["decision"]["verdict"] == "BLOCK", d
assert d["decision"]["reasons"] == ["DANGEROUS_COMMAND"], d
t = d["trace"]
assert [x["policy"] for x in t] == ["shell.lua"], t
assert t[0]["verdict"] == "BLOCK" and t[0]["reasons"] == ["DANGEROUS_COMMAND"]
assert isinstance(t[0]["us"], int) and t[0]["us"] >= 0
assert d["decision"]["revision"].startswith("sha256:")
' "$tmp/out"; then echo "ok   json output"; else fail "json output"; fi
run 0 "json escalate" "$ig" policy eval --bundle "$bundle" --format json \
    --intent - <<<'{"action":"db.write","resource":"prod/x"}'
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert "trace" not in d, d
a = d["decision"]["approval"]
assert a == {"groups": ["dba"], "quorum": 2, "ttl": 0}, a
' "$tmp/out"; then echo "ok   json escalation"; else fail "json escalation"; fi

# ---- a bundle of our own: ERROR, LIMIT, hostile text ----
mkdir "$tmp/own"
cat >"$tmp/own/a_allow.lua" <<'LUA'
return function(intent) return ALLOW end
LUA
cat >"$tmp/own/b_fail.lua" <<'LUA'
return function(intent)
  if intent.action == "error" then error("boom") end
  if intent.action == "loop" then while true do end end
  if intent.action == "say" then
    return BLOCK{reason = "SAID", message = intent.params.text}
  end
  if intent.action == "cfg" then
    return BLOCK{reason = config.code or "NO_CODE"}
  end
  return nil
end
LUA
cat >"$tmp/own/c_never.lua" <<'LUA'
return function(intent) return BLOCK "NEVER_REACHED_ON_FAILURE" end
LUA
run 0 "error entry" "$ig" policy eval --bundle "$tmp/own" --trace \
    --intent - <<<'{"action":"error"}'
has "error: decision" '^reasons   POLICY_ERROR$'
has "error: the file's entry" '^  b_fail\.lua +ERROR +POLICY_ERROR  [0-9]+ us$'
has "error: the one before" '^  a_allow\.lua +ALLOW +-  [0-9]+ us$'
if grep -q '^  c_never' "$tmp/out"; then fail "the trace goes on after ERROR"; \
else echo "ok   ERROR ends the trace"; fi
run 0 "limit entry" "$ig" policy eval --bundle "$tmp/own" --trace \
    --intent - <<<'{"action":"loop"}'
has "limit: the file's entry" '^  b_fail\.lua +LIMIT +POLICY_LIMIT  [0-9]+ us$'
# A message carrying terminal escapes and a newline is shown escaped.
run 0 "hostile message" "$ig" policy eval --bundle "$tmp/own" --trace \
    --intent - <<<'{"action":"say","params":{"text":"\u001b[2J\nfake line"}}'
if grep -q $'\x1b' "$tmp/out" || grep -q '^fake line' "$tmp/out"; then
    fail "a raw escape or newline reached the terminal"
else
    echo "ok   hostile message escaped"
fi
has "hostile: message shown" '^message   .*fake line$'
printf '{"code":"FROM_SETTINGS"}' >"$tmp/code.json"
run 0 "settings" "$ig" policy eval --bundle "$tmp/own" --trace \
    --settings "$tmp/code.json" --intent - <<<'{"action":"cfg"}'
has "settings: config seen" '^  b_fail\.lua +BLOCK +FROM_SETTINGS  [0-9]+ us$'

# ---- bad input: exit 2, one line naming the problem ----
bad() { # bad DESCRIPTION TEXT_ON_STDERR CMD_ARGS...
    local what=$1 text=$2
    shift 2
    run 2 "$what" "$ig" policy eval "$@" </dev/null || return
    if [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q -- "$text" "$tmp/err"
    then
        fail "$what: stderr is not one line with '$text'"
    else
        echo "ok   $what"
    fi
}
printf '{"action":"a"' >"$tmp/trunc.json"
printf '[1]' >"$tmp/array.json"
printf '{"action":"a","param":{}}' >"$tmp/typo.json"
printf '{"resource":"r"}' >"$tmp/noaction.json"
printf '{"action":"a","params":[]}' >"$tmp/badparams.json"
printf '{"action":7}' >"$tmp/badaction.json"
printf '{"action":"a","approval":"yes"}' >"$tmp/badapproval.json"
head -c 3000000 /dev/zero | tr '\0' ' ' >"$tmp/huge.json"
i="$tmp/small.json"
bad "no arguments" "expected --bundle" 
bad "no intent" "expected --bundle" --bundle "$bundle"
bad "unknown option" "unknown argument" --bundle "$bundle" --intent "$i" -x
bad "option without value" "needs a value" --bundle "$bundle" --intent
bad "bundle twice" "given twice" --bundle "$bundle" --bundle "$bundle" \
    --intent "$i"
bad "bad format" "text or json" --bundle "$bundle" --intent "$i" \
    --format yaml
bad "missing bundle" "$tmp/nope" --bundle "$tmp/nope" --intent "$i"
bad "missing intent" "nope.json" --bundle "$bundle" --intent "$tmp/nope.json"
bad "truncated JSON" "not valid JSON" --bundle "$bundle" \
    --intent "$tmp/trunc.json"
bad "intent not an object" "must be a JSON object" --bundle "$bundle" \
    --intent "$tmp/array.json"
bad "unknown intent field" "unknown field \`param\`" --bundle "$bundle" \
    --intent "$tmp/typo.json"
bad "no action" "action is required" --bundle "$bundle" \
    --intent "$tmp/noaction.json"
bad "params not an object" "params must be an object" --bundle "$bundle" \
    --intent "$tmp/badparams.json"
bad "action not a string" "action must be a string" --bundle "$bundle" \
    --intent "$tmp/badaction.json"
bad "approval not an object" "approval must be an object" \
    --bundle "$bundle" --intent "$tmp/badapproval.json"
bad "intent too large" "intent" --bundle "$bundle" --intent "$tmp/huge.json"
bad "settings not an object" "must be a JSON object" --bundle "$bundle" \
    --intent "$i" --settings "$tmp/array.json"
bad "count without =" "KEY=N" --bundle "$bundle" --intent "$i" --count k
bad "count empty key" "KEY=N" --bundle "$bundle" --intent "$i" --count =3
bad "count negative" "whole number" --bundle "$bundle" --intent "$i" \
    --count k=-1
bad "count not a number" "whole number" --bundle "$bundle" --intent "$i" \
    --count k=3x
bad "count empty" "whole number" --bundle "$bundle" --intent "$i" \
    --count k=
bad "count twice" "given twice" --bundle "$bundle" --intent "$i" \
    --count k=1 --count k=2
bad "count key too long" "KEY=N" --bundle "$bundle" --intent "$i" \
    --count "$(head -c 300 /dev/zero | tr '\0' k)=1"

run 0 "help" "$ig" policy eval --help && has "help" '^usage: intentgate policy eval'

echo "$fails failed"
[ "$fails" -eq 0 ]
