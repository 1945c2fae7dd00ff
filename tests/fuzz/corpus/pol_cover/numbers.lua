x = 1e-5 + 0x1p+4 + .5 + 0xe-1 if x then end
x = 3end
