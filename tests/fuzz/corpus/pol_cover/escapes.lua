s = "\"then" s = '\\' s = "a\z
  end" s = "a\
then" if a then end
