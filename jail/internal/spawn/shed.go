package spawn

/*
#include "shed.h"
*/
import "C"

import "runtime/debug"

// Shed gives back what this process no longer needs once it only waits for the run's end,
// serving at most the egress proxy: the Go heap's free memory (a collection first: resolving the
// profile and compiling the filter left garbage), and its mappings of jail's binary (shed.c).
func Shed() {
	debug.FreeOSMemory()
	C.jail_shed_binary()
}
