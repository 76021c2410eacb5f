package spawn

/*
#include "started.h"
*/
import "C"

// Started is when this process started (CLOCK_MONOTONIC, nanoseconds), as started.c noted it
// before Go's runtime.
var Started = int64(C.jail_started_ns)
