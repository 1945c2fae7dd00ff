/* ig_paseto.c - placeholder until implemented. */
#include "ig_paseto.h"
