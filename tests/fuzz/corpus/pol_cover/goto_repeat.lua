for i=1,2 do if i then goto c end ::c:: end
repeat if a then x=1 end until b do end
