#!/usr/bin/env bash
# test_approvals.sh - `intentgate approver add` and `intentgate approvals`
# against a real dev-mode PDP on loopback: an agent (curl) submits refunds
# that escalate, approvers list, show, approve and deny them from the
# command line, and the agent sees the outcome. Refusals (a second vote,
# self-approval, a wrong password, an unknown id) exit 1 with one line
# "CODE: message"; usage errors, unset variables and an unreachable PDP
# exit 2. The server must stop cleanly (exit 0) on SIGTERM.
#
#   test_approvals.sh PATH/TO/intentgate
#
# A missing tool (curl, python3) fails the test with one line naming it.
set -u
for tool in curl python3; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "FAIL: cli.approvals needs $tool, which is not installed" \
            "(scripts/deps.sh installs it)" >&2
        exit 1
    fi
done
ig=$1
tmp=$(mktemp -d)
srv_pid=
pass=0
fail=0

stop_server() { # SIGTERM, wait; the exit status in srv_rc
    kill -TERM "$srv_pid" 2>/dev/null
    wait "$srv_pid"
    srv_rc=$?
    srv_pid=
}
cleanup() {
    [ -n "$srv_pid" ] && stop_server
    rm -rf "$tmp"
}
trap cleanup EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
die() {
    echo "FATAL: $*" >&2
    [ -f "$tmp/serve.log" ] && tail -20 "$tmp/serve.log" >&2
    echo "approvals: $pass passed, $((fail + 1)) failed"
    exit 1
}

# expect_status WANT NAME CMD... : run CMD, stdout/stderr to $tmp/out,err
expect_status() {
    expect_status_in /dev/null "$@"
}
# expect_status_in FILE WANT NAME CMD... : the same with stdin from FILE
expect_status_in() {
    local in=$1 want=$2 name=$3 got
    shift 3
    "$@" >"$tmp/out" 2>"$tmp/err" <"$in"
    got=$?
    if [ "$got" -eq "$want" ]; then ok; else
        bad "$name: exit $got, want $want; stderr: $(head -c 300 "$tmp/err")"
    fi
}
# expect_err_line NAME REGEX : stderr is exactly one line matching REGEX
expect_err_line() {
    if [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qE "$2" "$tmp/err"; then
        ok
    else
        bad "$1: stderr not one line matching /$2/: $(cat "$tmp/err")"
    fi
}
# expect_out NAME REGEX : stdout has a line matching REGEX
expect_out() {
    if grep -qE -- "$2" "$tmp/out"; then ok; else
        bad "$1: stdout has no line matching /$2/: $(head -c 600 "$tmp/out")"
    fi
}
# json_get FILE EXPR : a Python expression on the JSON document d
json_get() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# ---- the server ----

# start_server: serve --dev on a free port; waits until DATA/dev.env names
# the port this run logged ("server.started") and /healthz answers, then
# loads dev.env into the environment. dev.env survives restarts (it keeps
# the tokens) and is replaced whole with the new URL at each start.
start_server() {
    local i port
    [ -f "$tmp/serve.log" ] && cat "$tmp/serve.log" >>"$tmp/serve.old.log"
    : >"$tmp/serve.log"
    "$ig" serve --dev --data "$tmp/data" --listen 127.0.0.1:0 \
        >"$tmp/serve.out" 2>"$tmp/serve.log" </dev/null &
    srv_pid=$!
    for i in $(seq 300); do
        kill -0 "$srv_pid" 2>/dev/null || die "the server exited at start"
        port=$(grep '"server.started"' "$tmp/serve.log" 2>/dev/null |
            grep -oE '"port":[0-9]+' | cut -d: -f2)
        if [ -n "$port" ] &&
            grep -q "^INTENTGATE_URL=http://127.0.0.1:$port\$" \
                "$tmp/data/dev.env" 2>/dev/null; then
            set -a
            # shellcheck disable=SC1091
            . "$tmp/data/dev.env"
            set +a
            if curl -fsS -o /dev/null "$INTENTGATE_URL/healthz"; then
                return 0
            fi
        fi
        sleep 0.1
    done
    die "the server did not start in 30 s"
}

# agent METHOD PATH [BODY] : the agent's call; body to $tmp/agent.json,
# status echoed
agent() {
    curl -sS -o "$tmp/agent.json" -w '%{http_code}' -X "$1" \
        -H "Authorization: Bearer $INTENTGATE_AGENT_TOKEN" \
        -H 'Content-Type: application/json' ${3:+--data-binary "$3"} \
        "$INTENTGATE_URL$2"
}

# refund ORDER AMOUNT [CONTEXT] : submit; sets approval, intent, hash
refund() {
    local ctx=${3:-'{"requested_by":"agent-run-7"}'} code
    code=$(agent POST /v1/intents "{\"action\":\"payments.refund\",\"resource\":\"orders/$1\",\"params\":{\"amount\":$2,\"currency\":\"EUR\",\"order_id\":\"$1\"},\"context\":$ctx}")
    if [ "$code" = 201 ] &&
        [ "$(json_get "$tmp/agent.json" 'd["decision"]')" = ESCALATE ]; then
        ok
    else
        bad "refund $1 of $2: HTTP $code $(head -c 300 "$tmp/agent.json")"
    fi
    approval=$(json_get "$tmp/agent.json" 'd["approval"]["id"]')
    intent=$(json_get "$tmp/agent.json" 'd["intent_id"]')
    hash=$(json_get "$tmp/agent.json" 'd["intent_hash"]')
}

# intent_state ID : the state the agent sees
intent_state() {
    agent GET "/v1/intents/$1" >/dev/null
    json_get "$tmp/agent.json" 'd["state"]'
}

# ---- without a server: help, usage errors, unset variables ----

for c in approvals approver; do
    expect_status 0 "$c --help" "$ig" "$c" --help
    expect_out "$c --help" "^usage: intentgate $c"
done
expect_status 0 "approvals list --help" "$ig" approvals list --help
expect_status 2 "no subcommand" "$ig" approvals
expect_err_line "no subcommand" 'list, show, approve or deny'
expect_status 2 "unknown subcommand" "$ig" approvals frobnicate
expect_status 2 "show without id" "$ig" approvals show
expect_err_line "show without id" 'missing the approval ID'
expect_status 2 "bad id" "$ig" approvals show '../../v1/intents'
expect_err_line "bad id" 'not an approval id'
expect_status 2 "list --comment" "$ig" approvals list --comment x
expect_status 2 "unset variables" env -u INTENTGATE_URL \
    -u INTENTGATE_APPROVER_ID -u INTENTGATE_APPROVER_PASSWORD \
    "$ig" approvals list
expect_err_line "unset variables" \
    '^intentgate approvals: INTENTGATE_URL, INTENTGATE_APPROVER_ID, INTENTGATE_APPROVER_PASSWORD not set'
expect_status 2 "unset password" env -u INTENTGATE_APPROVER_PASSWORD \
    INTENTGATE_URL=http://127.0.0.1:1 INTENTGATE_APPROVER_ID=x \
    "$ig" approvals list
expect_err_line "unset password" 'INTENTGATE_APPROVER_PASSWORD not set'
expect_status 2 "not an http URL" env INTENTGATE_URL=ftp://127.0.0.1 \
    INTENTGATE_APPROVER_ID=x INTENTGATE_APPROVER_PASSWORD=y \
    "$ig" approvals list
expect_err_line "not an http URL" 'INTENTGATE_URL: '

# ---- approver add ----

pw='correct horse battery staple'
printf '%s\n' "$pw" >"$tmp/pw"
"$ig" approver add carol --groups 'finance, ops' --name 'Carol Example' \
    --slack-user U012ABC <"$tmp/pw" >"$tmp/section" 2>"$tmp/err"
if [ $? -eq 0 ]; then ok; else bad "approver add: $(cat "$tmp/err")"; fi
cp "$tmp/section" "$tmp/out"
expect_out "section header" '^\[approver carol\]$'
expect_out "section name" '^name = Carol Example$'
expect_out "section groups" '^groups = finance, ops$'
expect_out "section hash" \
    '^password_hash = \$argon2id\$v=19\$m=[0-9]+,t=[0-9]+,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$'
expect_out "section slack" '^slack_user = U012ABC$'
if [ "$(wc -l <"$tmp/section")" -eq 5 ]; then ok; else
    bad "section has $(wc -l <"$tmp/section") lines"; fi
if grep -q "$pw" "$tmp/section"; then bad "the password is printed"; else
    ok; fi
printf 'longenough\n' >"$tmp/pw8"
expect_status_in "$tmp/pw8" 0 "approver add, no name" \
    "$ig" approver add dave --groups dba
expect_out "name defaults to the id" '^name = dave$'
if ! grep -q slack_user "$tmp/out"; then ok; else bad "slack_user printed"; fi
printf 'seven77\n' >"$tmp/pw7"
expect_status_in "$tmp/pw7" 2 "short password" \
    "$ig" approver add dave --groups dba
expect_err_line "short password" 'shorter than 8 bytes'
head -c 257 /dev/zero | tr '\0' x >"$tmp/pw257"
expect_status_in "$tmp/pw257" 2 "long password" \
    "$ig" approver add dave --groups dba
expect_err_line "long password" 'longer than 256 bytes'
head -c 256 /dev/zero | tr '\0' x >"$tmp/pw256"
expect_status_in "$tmp/pw256" 0 "256-byte password" \
    "$ig" approver add dave --groups dba
expect_status 2 "no password" "$ig" approver add dave --groups dba
expect_err_line "no password" 'no password'
expect_status 2 "bad id" "$ig" approver add -x --groups dba
expect_status 2 "symbol first" "$ig" approver add .x --groups dba
expect_err_line "symbol first" 'ID must be'
expect_status 2 "bad group" "$ig" approver add dave --groups 'dba,fi nance'
expect_err_line "bad group" 'not a group name'
g63=$(head -c 63 /dev/zero | tr '\0' g)
expect_status_in "$tmp/pw8" 0 "63-byte group" \
    "$ig" approver add dave --groups "$g63"
expect_status 2 "64-byte group (the PDP's config refuses it)" \
    "$ig" approver add dave --groups "${g63}g"
expect_err_line "64-byte group" 'not a group name'
expect_status 2 "empty group" "$ig" approver add dave --groups 'dba,'
expect_status 2 "no groups" "$ig" approver add dave
expect_status 2 "bad slack user" "$ig" approver add dave --groups a \
    --slack-user 'U1;x'
expect_status 2 "name with a newline" "$ig" approver add dave --groups a \
    --name "$(printf 'a\nb')"

# ---- a dev PDP with the new approver in its config ----

start_server # first run: creates the data directory
stop_server
if [ "$srv_rc" -eq 0 ]; then ok; else bad "first server exited $srv_rc"; fi
printf '\n' >>"$tmp/data/intentgate.conf"
cat "$tmp/section" >>"$tmp/data/intentgate.conf"
start_server
dev_id=$INTENTGATE_APPROVER_ID
dev_pw=$INTENTGATE_APPROVER_PASSWORD
as_carol() {
    INTENTGATE_APPROVER_ID=carol INTENTGATE_APPROVER_PASSWORD=$pw "$@"
}

# ---- list, show, approve ----

expect_status 0 "empty list" "$ig" approvals list
expect_out "empty list" 'No pending approvals'
refund ord_t1 500
expect_status 0 "list" "$ig" approvals list
expect_out "list header" '^ID +ACTION +RESOURCE +REQUESTER +VOTES +EXPIRES'
expect_out "list row" "^$approval +payments\\.refund +orders/ord_t1 +dev-agent +0/1 +[0-9]{4}-"
expect_status 0 "list as carol (the printed hash logs in)" as_carol \
    "$ig" approvals list
expect_out "carol sees it" "^$approval "
expect_status 0 "list --json" "$ig" approvals list --json
if [ "$(json_get "$tmp/out" 'd["approvals"][0]["approval_id"]')" = \
    "$approval" ]; then ok; else bad "list --json: $(head -c 300 "$tmp/out")"; fi
expect_status 0 "show" "$ig" approvals show "$approval"
expect_out "show action" '^Action +payments\.refund$'
expect_out "show resource" '^Resource +orders/ord_t1$'
expect_out "show amount" '^ +"amount": 500,$'
expect_out "show hash" "^Intent hash +$hash\$"
expect_out "show principal" '^Agent +dev-agent \(authenticated\)$'
expect_out "show context, labelled a claim" \
    '^Context +\(claimed by the agent, not verified\) \{$'
expect_out "show context" '"requested_by": "agent-run-7"'
expect_out "show reasons" '^Reasons +[A-Z_]+'
expect_out "show votes" '^Votes +none$'
expect_out "show may vote" '^You +may vote$'
expect_status 0 "show --json" "$ig" approvals show "$approval" --json
if [ "$(json_get "$tmp/out" 'd["intent_hash"]')" = "$hash" ]; then ok; else
    bad "show --json"; fi
expect_status 1 "show unknown" "$ig" approvals show 00000000-0000-4000-8000-000000000000
expect_err_line "show unknown" '^intentgate approvals: APPROVAL_NOT_FOUND: '

expect_status 0 "approve" "$ig" approvals approve "$approval" \
    --comment 'refund checked against the ticket'
expect_out "approve shows the hash first" "^Intent hash +$hash\$"
expect_out "approve shows the amount" '^ +"amount": 500,$'
expect_out "approve result" \
    '^Vote counted: approve\. Approval status: APPROVED, decision: ALLOW \(1 of 1 approvals\)$'
expect_status 1 "approve again" "$ig" approvals approve "$approval"
expect_err_line "approve again" \
    '^intentgate approvals: (ALREADY_VOTED|APPROVAL_RESOLVED): '
expect_status 1 "carol after resolution" as_carol "$ig" approvals deny \
    "$approval"
expect_err_line "carol after resolution" 'APPROVAL_RESOLVED'
state=$(intent_state "$intent")
if [ "$state" = ALLOWED ]; then ok; else bad "state after approve: $state"; fi
if [ "$(json_get "$tmp/agent.json" '"grant" in d')" = True ]; then ok; else
    bad "no grant after approve: $(head -c 300 "$tmp/agent.json")"; fi
expect_status 0 "show resolved" "$ig" approvals show "$approval"
expect_out "show the vote" \
    "^Votes +APPROVE by $dev_id .* via api at .*: \"refund checked against the ticket\"\$"
expect_out "show resolution" '^Resolution +APPROVED at '
expect_out "cannot vote now" '^You +cannot vote: (ALREADY_VOTED|APPROVAL_RESOLVED)$'

# ---- deny, self-approval ----

refund ord_t2 500
expect_status 0 "deny" as_carol "$ig" approvals deny "$approval" \
    --comment=no
expect_out "deny result" '^Vote counted: deny\. Approval status: DENIED'
state=$(intent_state "$intent")
if [ "$state" = BLOCKED ]; then ok; else bad "state after deny: $state"; fi

refund ord_t3 500 "{\"requested_by\":\"$dev_id\"}"
expect_status 1 "self-approval" "$ig" approvals approve "$approval"
expect_err_line "self-approval" '^intentgate approvals: SELF_APPROVAL: '
state=$(intent_state "$intent")
if [ "$state" = PENDING_APPROVAL ]; then ok; else
    bad "state after a refused vote: $state"; fi

# ---- claims that read like the PDP's own lines (review, issue 12) ----

fake='x\nAgent        root (authenticated)\u001b[2J\r'
refund "$fake" 500 '{"Agent (authenticated)":"root","requested_by":"root\nAgent        root"}'
expect_status 0 "show hostile claims" "$ig" approvals show "$approval"
n=$(grep -c '^Agent ' "$tmp/out")
if [ "$n" = 1 ]; then ok; else bad "lines starting Agent: $n"; fi
expect_out "the established agent" '^Agent +dev-agent \(authenticated\)$'
expect_out "the fake line stays in the resource" \
    '^Resource +orders/x\\nAgent +root \(authenticated\)\\u001b\[2J\\r$'
expect_out "the impersonating key stays in the claims" \
    '^ +"Agent \(authenticated\)": "root",$'
if LC_ALL=C grep -q "$(printf '\033')" "$tmp/out"; then
    bad "an escape byte reached the terminal"; else ok; fi
if LC_ALL=C grep -q "$(printf '\r')" "$tmp/out"; then
    bad "a carriage return reached the terminal"; else ok; fi

# ---- login failures and an unreachable PDP ----

expect_status 1 "wrong password" env INTENTGATE_APPROVER_PASSWORD=wrong-password \
    "$ig" approvals list
expect_err_line "wrong password" '^intentgate approvals: LOGIN_FAILED: '
expect_status 1 "unknown approver" env INTENTGATE_APPROVER_ID=mallory \
    "$ig" approvals list
expect_err_line "unknown approver" 'LOGIN_FAILED'
url=$INTENTGATE_URL
stop_server
if [ "$srv_rc" -eq 0 ]; then ok; else bad "server exited $srv_rc"; fi
expect_status 2 "unreachable PDP" env INTENTGATE_URL="$url" \
    INTENTGATE_APPROVER_PASSWORD="$dev_pw" "$ig" approvals approve "$approval"
expect_err_line "unreachable PDP" '^intentgate approvals: cannot reach '

echo "approvals: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
