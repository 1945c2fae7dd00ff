/* ig_time.c - placeholder until implemented. */
#include "ig_time.h"
