if a then  b()end
if c then end