return function(...) if ... then end end
local n = select("#", ...)
