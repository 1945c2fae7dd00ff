end
if a then else else end
until x
