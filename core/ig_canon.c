/* ig_canon.c - placeholder until implemented. */
#include "ig_canon.h"
