local s1 = "if x then end" -- then else end
local s2 = [==[
end ]] elseif ]==] --[[ if
then ]]
local s3 = 'a\'b\\' .. "\z
   end"
local T = { f = function(v) if v then return 1 end return 2 end }
local function deep(n) if n > 0 then return deep(n - 1) end return 0 end
return function(intent)
  local a = intent.action
  for i = 1, 3 do if i == 2 then goto next end ::next:: end
  if a == 'x.loop' then while true do end
  elseif a == 'x.err' then error('boom')
  elseif a == 'x.pcall' then
    local ok = pcall(function() if intent.params.q.r then end end)
    if ok then return BLOCK{reason = 'CAUGHT_NOT'} end
    return ALLOW
  elseif a == 'x.str' then
    if s1 .. s2 .. s3 ~= 'if x then endend ]] elseif ' .. "a'b\\end" then
      return BLOCK{reason = 'STRINGS_CHANGED'}
    end
    return ALLOW
  else
    if T.f(a == 'x.t') == 1 then return ESCALATE{reason = 'T'} end
    if deep(3) ~= 0 then return BLOCK{reason = 'DEEP'} end
  end
  return nil
end
