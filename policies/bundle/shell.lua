-- shell.lua - shell.exec: params.argv is the command as an array of strings.
--
--   sudo anywhere                              -> BLOCK DANGEROUS_COMMAND
--   rm with recursive + force (-rf, -fr, -r -f, --recursive --force)
--                                              -> BLOCK DANGEROUS_COMMAND
--   curl or wget piped into a shell (an argv element "|" followed by
--   sh/bash/zsh..., or such a pipe inside a `sh -c "..."` string)
--                                              -> BLOCK DANGEROUS_COMMAND
--   argv[1] exactly on ALLOWED (no path)       -> ALLOW
--   anything else                              -> ESCALATE to "security"
--   argv missing, empty, not strings, or over 8 KiB in all
--                                              -> BLOCK INVALID_PARAMS
-- The dangerous checks run first and win over the allowlist. They look at
-- every argv element split into shell words, so they also see inside
-- `sh -c` scripts and `find -exec rm -rf`; commands are matched by base
-- name (/usr/bin/sudo is sudo).

local ALLOWED = {
  ls = true, cat = true, git = true, make = true, npm = true,
  grep = true, head = true, tail = true, wc = true, pwd = true, echo = true,
}
local SHELLS = { sh = true, bash = true, zsh = true, dash = true, ksh = true }
local FETCHERS = { curl = true, wget = true }
local MAX_BYTES = 8192

-- Bytes that end a word: blanks, quotes and '=' (so `core.pager=sudo`
-- shows its command); and shell operators, which are also tokens.
local BLANK = { [9] = true, [10] = true, [13] = true, [32] = true,
                [34] = true, [39] = true, [61] = true }
local OPERATOR = { [38] = "&", [40] = "(", [41] = ")", [59] = ";",
                   [60] = "<", [62] = ">", [96] = "`", [124] = "|" }

local function basename(word)
  if not string.find(word, "/", 1, true) then
    return word
  end
  local i = #word
  while i > 0 and word:byte(i) ~= 47 do -- '/'
    i = i - 1
  end
  return word:sub(i + 1)
end

-- All argv elements split into shell words and operator tokens.
local function tokens(argv)
  local out = {}
  for _, arg in ipairs(argv) do
    local start
    for i = 1, #arg do
      local b = arg:byte(i)
      local op = OPERATOR[b]
      if op or BLANK[b] then
        if start then
          out[#out + 1] = arg:sub(start, i - 1)
          start = nil
        end
        if op then
          out[#out + 1] = op
        end
      elseif not start then
        start = i
      end
    end
    if start then
      out[#out + 1] = arg:sub(start)
    end
  end
  return out
end

-- Does the short-option cluster or long option t ask for recursion/force?
local function rm_flags(t)
  local recursive, force = false, false
  if t:byte(1) == 45 and t:byte(2) == 45 then -- "--long", prefixes too
    recursive = #t >= 3 and starts_with("--recursive", t)
    force = #t >= 3 and starts_with("--force", t)
  elseif t:byte(1) == 45 then
    for j = 2, #t do
      local c = t:byte(j)
      recursive = recursive or c == 114 or c == 82 -- r R
      force = force or c == 102 -- f
    end
  end
  return recursive, force
end

-- The first dangerous thing in the token list, or nil.
local function dangerous(toks)
  local fetched, in_rm, recursive, force = false, false, false, false
  for i, t in ipairs(toks) do
    local name = basename(t)
    if name == "sudo" then
      return "sudo"
    elseif FETCHERS[name] then
      fetched = true
    elseif t == "|" and fetched and toks[i + 1]
        and SHELLS[basename(toks[i + 1])] then
      return "a download piped into a shell"
    end
    if name == "rm" then
      in_rm, recursive, force = true, false, false
    elseif #t == 1 and (t == "|" or t == ";" or t == "&" or t == "("
        or t == ")" or t == "`") then
      in_rm = false
    elseif in_rm then
      local r, f = rm_flags(t)
      recursive, force = recursive or r, force or f
      if recursive and force then
        return "rm -rf"
      end
    end
  end
  return nil
end

-- argv as a non-empty array of strings under MAX_BYTES, or nil.
local function check_argv(params)
  local argv = type(params) == "table" and params.argv or nil
  if type(argv) ~= "table" or #argv == 0 then
    return nil
  end
  local total = 0
  for _, a in ipairs(argv) do
    if type(a) ~= "string" then
      return nil
    end
    total = total + #a
  end
  if total > MAX_BYTES then
    return nil
  end
  return argv
end

return function(intent)
  if intent.action ~= "shell.exec" then
    return nil
  end
  local argv = check_argv(intent.params)
  if argv == nil then
    return BLOCK{reason = "INVALID_PARAMS",
                 message = "params.argv must be a non-empty array of "
                   .. "strings of at most 8 KiB in all"}
  end
  local why = dangerous(tokens(argv))
  if why then
    return BLOCK{reason = "DANGEROUS_COMMAND",
                 message = "refused: " .. why}
  end
  if ALLOWED[argv[1]] then
    return ALLOW
  end
  if approved(intent, "security") then
    return ALLOW
  end
  return ESCALATE{approvers = {"security"}, reason = "COMMAND_NOT_ALLOWLISTED"}
end
