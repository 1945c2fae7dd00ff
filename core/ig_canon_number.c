/* ig_canon_number.c - placeholder until implemented. */
#include "ig_canon.h"
