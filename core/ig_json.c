/* ig_json.c - placeholder until implemented. */
#include "ig_json.h"
