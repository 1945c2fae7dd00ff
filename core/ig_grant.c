/* ig_grant.c - placeholder until implemented. */
#include "ig_grant.h"
