/* ig_hash.c - placeholder until implemented. */
#include "ig_hash.h"
