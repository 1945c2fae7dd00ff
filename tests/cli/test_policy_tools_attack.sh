#!/usr/bin/env bash
# tests/cli/test_policy_tools_attack.sh - `policy test --coverage` attacked
# with hostile policy sources: every case must decide exactly as without
# --coverage (same ok/FAIL lines, messages with their line numbers, same
# summary, same exit status), whatever the source hides from a tokenizer
# (keywords in strings, long strings and comments, `--[==[`, goto, an
# ambiguous call after `then`, CRLF, identifiers that contain keywords, an
# `if` chain inside a table constructor's function) or costs (a loop near
# the instruction budget), and the probe is invisible to policy code.
# Sources that do not compile are refused the same way.
#   test_policy_tools_attack.sh INTENTGATE
set -u
ig=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() {
    echo "FAIL $*" >&2
    fails=$((fails + 1))
}

cases() { # the verdict lines and the summary of a `policy test` output
    grep -E '^(ok   |FAIL |[0-9]+ passed, [0-9]+ failed$)' "$1"
}

# same DESCRIPTION DIR WANT_STATUS: plain and --coverage agree, and the
# plain run exits WANT_STATUS (the bundle means what the test says).
same() {
    local what=$1 dir=$2 want=$3
    "$ig" policy test "$dir" >"$tmp/plain.out" 2>"$tmp/plain.err"
    local p=$?
    "$ig" policy test "$dir" --coverage >"$tmp/cov.out" 2>"$tmp/cov.err"
    local c=$?
    if [ "$p" -ne "$want" ]; then
        fail "$what: plain exit $p, want $want (the test bundle is wrong)"
        sed 's/^/  | /' "$tmp/plain.out" "$tmp/plain.err" >&2
        return
    fi
    if [ "$c" -ne "$p" ]; then
        fail "$what: --coverage exit $c, plain $p"
        sed 's/^/  cov | /' "$tmp/cov.out" "$tmp/cov.err" >&2
        return
    fi
    if ! diff <(cases "$tmp/plain.out") <(cases "$tmp/cov.out") \
        >"$tmp/diff"; then
        fail "$what: --coverage decided differently"
        sed 's/^/  | /' "$tmp/diff" >&2
        return
    fi
    if [ "$p" -eq 2 ]; then
        # Refused: the same one-line reason (file and line) both ways.
        if ! grep -qF -- "$(head -n 1 "$tmp/plain.err")" "$tmp/cov.err"; then
            fail "$what: --coverage refused with another reason"
            sed 's/^/  | /' "$tmp/plain.err" "$tmp/cov.err" >&2
            return
        fi
    elif ! grep -q 'coverage' "$tmp/cov.out"; then
        fail "$what: --coverage printed no coverage"
        return
    fi
    echo "ok   $what"
}

# ---- keywords where a tokenizer must not see them ----
d=$tmp/strings
mkdir "$d"
cat >"$d/p.lua" <<'LUA'
-- if then else elseif end function do while repeat until goto
--[[ if x then
  else end ]]
--[==[ ]] still a comment then end ]=] else ]==]
local s1 = "if x then y else z end"
local s2 = 'then\'else"end --[['
local s3 = [[
then else end]]
local s4 = [==[ ]] then end ]=] else ]==]
local s5 = "a\z
     then \"end\" \
else"
local endif, thenx, else_, _end = 1, 2, 3, 4
local t = { ["then"] = 5, ["end"] = 6, f = function(x)
  if x then return "f1" elseif x == nil then return "f2" end
  return "f3"
end }
return function(intent)
  local a = intent.action
  if a == s1 then return BLOCK{reason = "S1"}
  elseif a == "lens" then
    if #s2 == 18 and #s3 == 13 and #s4 == 22 and #s5 == 17 then
      return ALLOW end
    return BLOCK{reason = "BAD_LENGTHS", message = #s2 .. " " .. #s3 ..
                 " " .. #s4 .. " " .. #s5}
  elseif a == "names" then
    if endif + thenx + else_ + _end + t["then"] + t["end"] == 21 then
      return ALLOW else return BLOCK{reason = "NAMES"} end
  elseif a == "tablefn" then
    if t.f(true) == "f1" and t.f(nil) == "f2" and t.f(false) == "f3" then
      return ALLOW
    end
    return BLOCK{reason = "TABLEFN"}
  else if a == "nested" then return ALLOW end end
  return nil
end
LUA
cat >"$d/p_test.lua" <<'LUA'
return {
  { name = "s1", intent = { action = "if x then y else z end" },
    expect = "BLOCK", reasons = { "S1" } },
  { name = "lengths", intent = { action = "lens" }, expect = "ALLOW" },
  { name = "names", intent = { action = "names" }, expect = "ALLOW" },
  { name = "table fn", intent = { action = "tablefn" }, expect = "ALLOW" },
  { name = "nested", intent = { action = "nested" }, expect = "ALLOW" },
  { name = "none", intent = { action = "other" }, expect = "BLOCK",
    reasons = { "NO_POLICY_MATCHED" } },
}
LUA
same "keywords in strings, long strings, comments, names" "$d" 0

# ---- goto, repeat-until, while, one-line ifs ----
d=$tmp/flow
mkdir "$d"
cat >"$d/p.lua" <<'LUA'
return function(intent)
  local n = 0
  for i = 1, 5 do
    if i == 2 then goto continue end
    if i == 4 then goto continue elseif i == 5 then n = n + 100 end
    n = n + i
    ::continue::
  end
  local k = 0
  repeat local y = k; k = k + 1; if y > 10 then break end until y >= 3
  while true do if k > 0 then break end end
  if intent.action == "flow" then
    if n == 109 and k == 4 then return ALLOW end
    return BLOCK{reason = "FLOW", message = n .. " " .. k}
  end
  do if intent.action == "do" then return ALLOW end end
  return nil
end
LUA
cat >"$d/p_test.lua" <<'LUA'
return {
  { name = "flow", intent = { action = "flow" }, expect = "ALLOW" },
  { name = "do", intent = { action = "do" }, expect = "ALLOW" },
}
LUA
same "goto, repeat-until, while, do blocks" "$d" 0

# ---- a statement after `then` that starts with ( : a probe call
# inserted before it without ; would call the probe's result ----
d=$tmp/paren
mkdir "$d"
cat >"$d/p.lua" <<'LUA'
local hit = false
local function mark() hit = true end
return function(intent)
  hit = false
  if intent.action == "p" then (mark)() end
  if intent.action == "q" then hit = false else (mark)() end
  if hit then return ALLOW end
  return BLOCK{reason = "NOT_HIT"}
end
LUA
cat >"$d/p_test.lua" <<'LUA'
return {
  { name = "paren after then", intent = { action = "p" }, expect = "ALLOW" },
  { name = "paren after else", intent = { action = "r" }, expect = "ALLOW" },
  { name = "no paren", intent = { action = "q" }, expect = "BLOCK",
    reasons = { "NOT_HIT" } },
}
LUA
same "a parenthesised call right after then/else" "$d" 0

# ---- CRLF, and error messages carrying their line ----
d=$tmp/crlf
mkdir "$d"
printf 'return function(intent)\r\n  if intent.action == "boom" then\r\n    error("boom on line 3")\r\n  elseif intent.action == "x" then\r\n    return ALLOW\r\n  end\r\n  local t = nil\r\n  if intent.action == "nil" then return t.field end\r\n  return nil\r\nend\r\n' >"$d/p.lua"
cat >"$d/p_test.lua" <<'LUA'
return {
  { name = "x", intent = { action = "x" }, expect = "ALLOW" },
  -- Wrong on purpose: the FAIL line carries the error and its line.
  { name = "boom shows its line", intent = { action = "boom" },
    expect = "ALLOW" },
  { name = "nil index shows its line", intent = { action = "nil" },
    expect = "ALLOW" },
}
LUA
same "CRLF source, error lines" "$d" 1
grep -q 'p.lua:3: boom on line 3' "$tmp/cov.out" ||
    fail "CRLF: the error's line moved under --coverage"

# ---- near the instruction budget (1,000,000 per evaluation; this loop
# is about 80% of it: 500,000 turns exceed it) ----
d=$tmp/budget
mkdir "$d"
cat >"$d/p.lua" <<'LUA'
return function(intent)
  if intent.action ~= "spin" then return nil end
  local n = 0
  for i = 1, 400000 do
    if i < 0 then n = n + 1 end
  end
  if n == 0 then return ALLOW end
  return BLOCK{reason = "SPIN"}
end
LUA
cat >"$d/p_test.lua" <<'LUA'
return {
  { name = "spin within the budget", intent = { action = "spin" },
    expect = "ALLOW" },
}
LUA
same "a loop near the instruction budget" "$d" 0

# ---- the probe is invisible to policy code ----
d=$tmp/probe
mkdir "$d"
cat >"$d/p.lua" <<'LUA'
local NAMES = { "__igcov", "__cov", "_igcov", "igcov", "__ig_cover",
                "__pol_cover", "__coverage", "igcover", "_cov", "__probe" }
return function(intent)
  for _, n in ipairs(NAMES) do
    -- The sandbox raises on an unknown global: pcall keeps that apart.
    local ok, v = pcall(function() return _ENV[n] end)
    if ok and v ~= nil then return BLOCK{reason = "PROBE_SEEN"} end
  end
  for k in pairs(_ENV) do
    if type(k) == "string" and (k:find("cov") or k:sub(1, 2) == "__") then
      return BLOCK{reason = "PROBE_SEEN", message = k}
    end
  end
  return ALLOW
end
LUA
cat >"$d/p_test.lua" <<'LUA'
return {
  { name = "no probe in sight", intent = { action = "a" }, expect = "ALLOW" },
}
LUA
same "the probe is not visible to policies" "$d" 0

# ---- at Lua's own limits: 200 locals in the main chunk (a probe local
# would be the 201st), a source using `...` and the probe's own name ----
d=$tmp/limits
mkdir "$d"
{
    for i in $(seq 1 199); do echo "local v$i = $i"; done
    echo 'local args = select("#", ...)'
    echo 'return function(intent)'
    echo '  local __igcov = "mine"'
    echo '  if intent.action == "a" and v199 == 199 and args == 0 and'
    echo '     __igcov == "mine" then return ALLOW end'
    echo '  return nil'
    echo 'end'
} >"$d/p.lua"
printf 'return { { name = "a", intent = { action = "a" }, expect = "ALLOW" } }\n' \
    >"$d/p_test.lua"
same "200 locals, ..., a local named like the probe" "$d" 0

# ---- sources that do not compile: refused alike ----
for src in 'return function(intent)\n  if intent.action == "a" then' \
    'return function(intent) return ALLOW end\n--[==[ never closed' \
    'return function(intent)\n  if x then return ALLOW end end end\n' \
    'return function(intent)\n  goto nowhere\nend\n' \
    'return function(intent)\n  local s = [==[ ]=] \nend\n'; do
    nbroken=$((${nbroken:-0} + 1))
    d=$tmp/broken$nbroken
    mkdir "$d"
    printf '%b' "$src" >"$d/p.lua"
    printf 'return { { name = "a", intent = { action = "a" }, expect = "ALLOW" } }\n' \
        >"$d/p_test.lua"
    same "does not compile: $(printf '%b' "$src" | tr '\n' ' ' | cut -c1-50)" "$d" 2
done

# ---- a policy file of only a comment or whitespace tail ----
d=$tmp/tail
mkdir "$d"
printf 'return function(intent)\n  if intent.action == "a" then return ALLOW end\nend\n-- then' >"$d/p.lua"
printf 'return { { name = "a", intent = { action = "a" }, expect = "ALLOW" } }\n' \
    >"$d/p_test.lua"
same "a comment with then at EOF, no newline" "$d" 0

if [ "$fails" -ne 0 ]; then
    echo "$fails failed" >&2
    exit 1
fi
echo "all passed"
