while f(function() if a then end end) do end
t = { k = function() if a then return 1 end end }
if (function() if a then return 1 end end)() then end
