package jail

/*
#include "started.h"
*/
import "C"

// startedNs is when this process started (CLOCK_MONOTONIC, nanoseconds), as started.c noted it
// before Go's runtime.
var startedNs = int64(C.jail_started_ns)
