#!/usr/bin/env bash
# curl.sh - ask intentgate for leave to act, with bash and curl only.
#
#   INTENTGATE_URL=http://127.0.0.1:8700 INTENTGATE_TOKEN=igt_... \
#       ./curl.sh [ACTION [RESOURCE [PARAMS_JSON]]]
#
# Submits the intent (POST /v1/intents) and handles the three decisions:
#   ALLOW    -> prints the answer (with the grant), exit 0
#   ESCALATE -> long-polls GET /v1/intents/{id}?wait=60 until a human
#               decides or INTENTGATE_WAIT seconds (default 300) pass
#   BLOCK    -> prints the answer (with its reasons), exit 4
# With INTENTGATE_EXECUTOR_URL set, an allowed intent is then sent with its
# grant to the executor (POST /v1/execute) and its reply printed.
#
# Exit status, as `intentgate submit`: 0 allowed (and, with an executor,
# COMPLETED), 2 error, 3 still waiting for a human, 4 blocked or expired,
# 5 allowed but the executor did not complete it.
#
# The few fields needed are read with grep: the PDP answers canonical JSON
# (RFC 8785: keys sorted, no whitespace), so the top-level "decision" and
# "grant" come before the agent's own params and the top-level "intent_id"
# and "state" are the last of their name. With jq installed, prefer
# `jq -r .decision` and friends.
set -euo pipefail

action=${1:-payments.refund}
resource=${2:-orders/1}
params=${3:-'{"amount":42,"currency":"EUR","order_id":"o-1"}'}
wait_s=${INTENTGATE_WAIT:-300}

die() { # STATUS MESSAGE: one line on stderr, then exit
    echo "curl.sh: $2" >&2
    exit "$1"
}

[ -n "${INTENTGATE_URL:-}" ] || die 2 "INTENTGATE_URL is not set"
[ -n "${INTENTGATE_TOKEN:-}" ] || die 2 "INTENTGATE_TOKEN is not set"
[[ $wait_s =~ ^[0-9]+$ ]] || die 2 "INTENTGATE_WAIT must be whole seconds"

json_str() { # a bash string as a JSON string
    local s=$1
    [[ $s != *[[:cntrl:]]* ]] || die 2 "control character in '$s'"
    s=${s//\\/\\\\}
    printf '"%s"' "${s//\"/\\\"}"
}

field() { # first|last NAME JSON: a top-level string field (see above)
    local pick="head"
    [ "$1" = last ] && pick="tail"
    grep -o "\"$2\":\"[^\"]*\"" <<<"$3" | "$pick" -n 1 | cut -d'"' -f4 ||
        true
}

# call METHOD URL [BODY]: sets $status and $body. The token goes to curl on
# its standard input (-H @-), not on its command line where ps shows it.
call() {
    local out data=()
    [ $# -lt 3 ] || data=(-H 'Content-Type: application/json' --data-binary "$3")
    out=$(printf 'Authorization: Bearer %s\n' "$INTENTGATE_TOKEN" |
        curl -sS --max-time 75 -X "$1" -H @- "${data[@]}" \
            -w '\n%{http_code}' "$2") || die 2 "cannot reach $2"
    status=${out##*$'\n'}
    body=${out%$'\n'*}
}

# 1. Submit.
call POST "$INTENTGATE_URL/v1/intents" \
    "{\"action\":$(json_str "$action"),\"resource\":$(json_str "$resource"),\"params\":$params}"
case $status in
200 | 201) ;;
*) die 2 "the PDP refused (HTTP $status): $body" ;;
esac
answer=$body
decision=$(field first decision "$answer")
intent_id=$(field last intent_id "$answer")
[[ $intent_id =~ ^[0-9a-f-]+$ ]] || die 2 "no intent_id in the answer"

# 2. An escalation: long-poll until the state leaves PENDING_APPROVAL.
if [ "$decision" = ESCALATE ]; then
    echo "curl.sh: ESCALATE: waiting up to ${wait_s}s for a human" >&2
    deadline=$((SECONDS + wait_s))
    state=PENDING_APPROVAL
    while [ "$state" = PENDING_APPROVAL ] && [ $SECONDS -lt $deadline ]; do
        left=$((deadline - SECONDS))
        call GET "$INTENTGATE_URL/v1/intents/$intent_id?wait=$((left < 60 ? left : 60))"
        [ "$status" = 200 ] || die 2 "waiting: HTTP $status: $body"
        answer=$body
        state=$(field last state "$answer")
    done
    case $state in
    ALLOWED) decision=ALLOW ;;
    PENDING_APPROVAL) echo "$answer" && die 3 "still waiting for a human" ;;
    BLOCKED | EXPIRED) decision=BLOCK ;;
    *) die 2 "the intent is $state" ;;
    esac
fi

# 3. The decision.
case $decision in
ALLOW) ;;
BLOCK) echo "$answer" && die 4 "BLOCK" ;;
*) die 2 "unexpected answer: $answer" ;;
esac
grant=$(field first grant "$answer")
[[ $grant == v4.public.* ]] || die 2 "ALLOW without a grant"
if [ -z "${INTENTGATE_EXECUTOR_URL:-}" ]; then
    echo "$answer"
    echo "curl.sh: ALLOW: intent $intent_id has its grant" >&2
    exit 0
fi

# 4. Execute: the binding exactly as returned, and the grant. The binding is
# the text between the first "intent": and the last ,"intent_hash": (the
# keys before and after it are the PDP's own).
intent=${answer#*\"intent\":}
intent=${intent%,\"intent_hash\":*}
out=$(curl -sS --max-time 75 -H 'Content-Type: application/json' \
    --data-binary "{\"intent\":$intent,\"grant\":\"$grant\"}" \
    -w '\n%{http_code}' "$INTENTGATE_EXECUTOR_URL/v1/execute") ||
    die 5 "cannot reach the executor; check GET /v1/intents/$intent_id"
status=${out##*$'\n'}
body=${out%$'\n'*}
echo "$body"
[ "$status" = 200 ] || die 5 "the executor refused (HTTP $status)"
outcome=$(field first outcome "$body")
[ "$outcome" = COMPLETED ] || die 5 "outcome $outcome"
echo "curl.sh: COMPLETED" >&2
