package spawn

/*
#include "boot.h"
*/
import "C"

import (
	"os"
	"runtime"
	"strings"
)

// The environment entry boot.c lent to GOMAXPROCS=1, given back to Go's copy of the environment
// before any other package's code reads it (this package's initialisation runs before that of
// every package that starts a run). An entry whose name came earlier too is not added: Go's
// copy keeps only the first of a name.
func init() {
	if C.jail_boot_swapped == nil {
		return
	}
	os.Unsetenv("GOMAXPROCS")
	k, v, _ := strings.Cut(C.GoString(C.jail_boot_swapped), "=") // boot.c lends only NAME=VALUE
	if _, dup := os.LookupEnv(k); !dup {
		os.Setenv(k, v)
	}
}

// RestoreProcs gives a process that booted with one P (boot.c) the runtime's default number of
// them: for a Go process of the run that stays once the command has started.
func RestoreProcs() {
	if C.jail_boot_swapped != nil {
		runtime.SetDefaultGOMAXPROCS()
	}
}
