if a then x=1 elseif b then x=2 elseif c then x=3 else x=4 end
