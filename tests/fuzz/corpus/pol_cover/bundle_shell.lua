-- shell.lua - shell.exec: params.argv is the command as an array of strings.
--
--   argv missing, empty, not strings, over 8 KiB in all or 1024
--   elements, or an element holding a NUL byte -> BLOCK INVALID_PARAMS
--   sudo anywhere                              -> BLOCK DANGEROUS_COMMAND
--   rm with recursive + force (-rf, -fr, -r -f, --recursive --force)
--                                              -> BLOCK DANGEROUS_COMMAND
--   curl or wget piped into a shell (an argv element "|" followed by
--   sh/bash/zsh..., or such a pipe inside a `sh -c "..."` string)
--                                              -> BLOCK DANGEROUS_COMMAND
--   argv[1] exactly echo (any arguments), or pwd alone (or -L, -P)
--                                              -> ALLOW
--   argv[1] exactly cat, head, tail, wc, grep or ls, every argument
--   passing the scratch rules below           -> ALLOW
--   one of those with an argument naming a path outside the scratch
--   directory                                  -> ESCALATE to "security"
--                                                 (PATH_OUTSIDE_SCRATCH)
--   one of those with an argument naming a sensitive file, as file.lua
--   reads them (a component .git .ssh .gnupg .aws .claude .mcp.json,
--   starting .env, ending .pem, starting id_rsa id_dsa id_ecdsa
--   id_ed25519; any case)                      -> ESCALATE to "security"
--                                                 (SENSITIVE_PATH)
--   one of those (or pwd) with a refused option, or a control, invisible
--   (format) or ill-formed character (clean_text)
--                                              -> ESCALATE to "security"
--                                                 (ARGUMENT_NOT_ALLOWED)
--   anything else: git, make, npm, env, xargs, find, sh, python, awk, ...,
--   or an allowlisted name given with a path (/bin/cat)
--                                              -> ESCALATE to "security"
--                                                 (COMMAND_NOT_ALLOWLISTED)
--   every escalation                           -> ALLOW once a member of
--                                                 "security" approved it
--
-- Why these programs: none of them can run another program, write a file
-- or read one named anywhere but in its arguments, so confining the
-- arguments confines the command. Programs that run code (git through
-- -c core.pager= or aliases, make, npm exec/run, env, xargs, find -exec,
-- shells, interpreters, awk, sed, tee, dd) are never allowed unasked.
--
-- The scratch rules (cat head tail wc grep ls): the command runs in its
-- scratch directory (the executor's /scratch; for Claude Code, the shell's
-- current directory), so only relative paths without a ".." component
-- stay inside. Every argument is read as if it were a path, because an
-- option's value may be one:
--   - the whole argument must not start with "/" or "~" nor have a ".."
--     component;
--   - "--name=value": the value likewise;
--   - "-xyz" (short options, a value may be attached: -f/x): no "/" or
--     "~" anywhere after the dash and no ".." ending a component (give a
--     value with a "/" as the next argument: -f dir/list);
--   - wc --files0-from (and its abbreviations --f, --fi, ...), which reads
--     the names of the files to open from another file, is refused;
--   - a control character (newline, tab, escape, C1, ...), an invisible
--     one (U+200B, U+200C -- HFS+ drops it, so ".g\u{200c}it" is ".git" --,
--     U+202E, U+FEFF, ...) or invalid UTF-8 is refused (clean_text).
-- Paths are read as text: a symlink inside the scratch directory that
-- points outside is not seen (the executor's sandbox is the boundary). The
-- dangerous checks run first and win. They look at every argv element
-- split into shell words, so they also see inside `sh -c` scripts and
-- `find -exec rm -rf`; commands there are matched by base name
-- (/usr/bin/sudo is sudo).

-- The library functions and helpers used per byte or per argument, as
-- locals: a global is two table lookups through the read-only environment.
local byte, find, sub = string.byte, string.find, string.sub
local starts_with, ends_with, clean_text = starts_with, ends_with, clean_text

-- Programs allowed without a human, and what their arguments may be.
local SCRATCH = { cat = true, head = true, tail = true, wc = true,
                  grep = true, ls = true }
local PWD_OPTIONS = { ["-L"] = true, ["-P"] = true }
-- Long options refused per program, with every abbreviation getopt takes.
local REFUSED_LONG = { wc = { "files0-from" } }
local NONE = {}
-- Sensitive names, as file.lua reads them (a component, any case).
local SENSITIVE_PARTS = {
  [".git"] = true, [".ssh"] = true, [".gnupg"] = true, [".aws"] = true,
  [".claude"] = true, [".mcp.json"] = true,
}
local KEY_PREFIXES = { "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519" }

local SHELLS = { sh = true, bash = true, zsh = true, dash = true, ksh = true }
local FETCHERS = { curl = true, wget = true }
local MAX_BYTES = 8192
local MAX_ARGS = 1024

-- Bytes that end a word: blanks, quotes and '=' (so `core.pager=sudo`
-- shows its command); and shell operators, which are also tokens.
local BLANK = { [9] = true, [10] = true, [13] = true, [32] = true,
                [34] = true, [39] = true, [61] = true }
local OPERATOR = { [38] = "&", [40] = "(", [41] = ")", [59] = ";",
                   [60] = "<", [62] = ">", [96] = "`", [124] = "|" }
-- Both as one array over every byte value: the operator token, true for
-- a word end, false for a byte of a word.
local CLASS = {}
for b = 0, 255 do
  CLASS[b] = OPERATOR[b] or BLANK[b] or false
end

-- The name checks below skip strings without a "." or "id_" (every
-- sensitive name holds one of them); refuse to load if an edit of the
-- lists breaks that.
for part in pairs(SENSITIVE_PARTS) do
  if not find(part, ".", 1, true) then
    error("SENSITIVE_PARTS: " .. part .. " has no '.'")
  end
end
for _, key in ipairs(KEY_PREFIXES) do
  if sub(key, 1, 3) ~= "id_" then
    error("KEY_PREFIXES: " .. key .. " does not start with 'id_'")
  end
end

local function basename(word)
  if not find(word, "/", 1, true) then
    return word
  end
  local i = #word
  while i > 0 and byte(word, i) ~= 47 do -- '/'
    i = i - 1
  end
  return sub(word, i + 1)
end

-- All argv elements split into shell words and operator tokens. The bytes
-- of an element are read in one call (check_argv capped them at MAX_BYTES).
local function tokens(argv)
  local out, n = {}, 0
  for _, arg in ipairs(argv) do
    local bytes, start = { byte(arg, 1, -1) }, nil
    for i = 1, #bytes do
      local class = CLASS[bytes[i]]
      if class then
        if start then
          n = n + 1
          out[n] = sub(arg, start, i - 1)
          start = nil
        end
        if class ~= true then
          n = n + 1
          out[n] = class
        end
      elseif not start then
        start = i
      end
    end
    if start then
      n = n + 1
      out[n] = sub(arg, start)
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

-- argv as a non-empty array of at most MAX_ARGS strings, MAX_BYTES in all,
-- without NUL bytes, or nil. A NUL cannot reach the program (execve ends
-- the string there), so what would run is not what was decided on.
local function check_argv(params)
  local argv = type(params) == "table" and params.argv or nil
  if type(argv) ~= "table" or #argv == 0 or #argv > MAX_ARGS then
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
  for _, a in ipairs(argv) do
    if find(a, "\0", 1, true) then
      return nil
    end
  end
  return argv
end

-- Does s contain ".." as a whole component ("..", "../x", "x/..",
-- "x/../y")? With from_anywhere, also where ".." merely ends a component
-- ("x.." counts): for a short-option cluster, whose attached value may
-- start at any byte.
local function has_dotdot(s, from_anywhere)
  local i = find(s, "..", 1, true)
  while i do
    local after = byte(s, i + 2)
    if (after == nil or after == 47)
        and (from_anywhere or i == 1 or byte(s, i - 1) == 47) then
      return true
    end
    i = find(s, "..", i + 1, true)
  end
  return false
end

-- Could v, used as a path, leave the scratch directory?
local function outside(v)
  local b = byte(v, 1)
  return b == 47 or b == 126 or has_dotdot(v, false) -- "/" "~"
end

-- Is one component (already lower case) a sensitive name?
local function sensitive_part(part)
  if SENSITIVE_PARTS[part] or starts_with(part, ".env")
      or ends_with(part, ".pem") then
    return true
  end
  if sub(part, 1, 3) == "id_" then -- every key prefix starts so
    for _, key in ipairs(KEY_PREFIXES) do
      if starts_with(part, key) then
        return true
      end
    end
  end
  return false
end

-- Does a component of v (split at "/" and "=") name a sensitive file?
local function names_sensitive(v)
  local lower = v:lower()
  if not find(lower, ".", 1, true) and not find(lower, "id_", 1, true) then
    return false -- no component can be a sensitive name
  end
  local bytes, start = { byte(lower, 1, -1) }, 1
  for i = 1, #lower + 1 do
    local b = bytes[i]
    if b == nil or b == 47 or b == 61 then -- end, "/", "="
      if i > start and sensitive_part(sub(lower, start, i - 1)) then
        return true
      end
      start = i + 1
    end
  end
  return false
end

-- Is the long option name (without "--") a refused one for prog, or an
-- abbreviation getopt would take for it?
local function refused_long(prog, name)
  for _, full in ipairs(REFUSED_LONG[prog] or NONE) do
    if #name > 0 and starts_with(full, name) then
      return true
    end
  end
  return false
end

-- Nil when every argument of prog (cat head tail wc grep ls) keeps to the
-- scratch rules, else the reason and a message naming the argument.
local function scratch_violation(argv)
  local prog = argv[1]
  for n = 2, #argv do
    local a = argv[n]
    local clean, _, detail = clean_text(a)
    if not clean then
      return "ARGUMENT_NOT_ALLOWED",
        prog .. ": argument " .. (n - 1) .. " holds " .. detail
    end
    local bad = outside(a)
    if not bad and starts_with(a, "--") then
      local eq = find(a, "=", 3, true)
      local name = eq and sub(a, 3, eq - 1) or sub(a, 3)
      if refused_long(prog, name) then
        return "ARGUMENT_NOT_ALLOWED",
          prog .. ": argument " .. (n - 1) .. " is a refused option"
      end
      bad = eq ~= nil and outside(sub(a, eq + 1))
    elseif not bad and byte(a, 1) == 45 then -- "-xyz": a value may follow
      bad = find(a, "/", 2, true) ~= nil
        or find(a, "~", 2, true) ~= nil or has_dotdot(a, true)
    end
    if bad then
      return "PATH_OUTSIDE_SCRATCH", prog .. ": argument " .. (n - 1)
        .. " names a path outside the scratch directory"
    end
    if names_sensitive(a) then
      return "SENSITIVE_PATH", prog .. ": argument " .. (n - 1)
        .. " names a sensitive file"
    end
  end
  return nil
end

-- Nil when argv may run without a human, else the reason and a message.
local function needs_human(argv)
  local prog = argv[1]
  if prog == "echo" then
    return nil
  elseif prog == "pwd" then
    for n = 2, #argv do
      if not PWD_OPTIONS[argv[n]] then
        return "ARGUMENT_NOT_ALLOWED", "pwd takes only -L or -P"
      end
    end
    return nil
  elseif SCRATCH[prog] then
    return scratch_violation(argv)
  end
  return "COMMAND_NOT_ALLOWLISTED", nil
end

return function(intent)
  if intent.action ~= "shell.exec" then
    return nil
  end
  local argv = check_argv(intent.params)
  if argv == nil then
    return BLOCK{reason = "INVALID_PARAMS",
                 message = "params.argv must be a non-empty array of at "
                   .. "most 1024 strings without NUL bytes, 8 KiB in all"}
  end
  local why = dangerous(tokens(argv))
  if why then
    return BLOCK{reason = "DANGEROUS_COMMAND",
                 message = "refused: " .. why}
  end
  local reason, message = needs_human(argv)
  if reason == nil or approved(intent, "security") then
    return ALLOW
  end
  return ESCALATE{approvers = {"security"}, reason = reason,
                  message = message}
end
