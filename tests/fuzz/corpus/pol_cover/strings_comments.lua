s = "if then end" -- if x then
t = [==[ end ]] then ]=] ]==] --[[ if
then ]]
if a then b() end
