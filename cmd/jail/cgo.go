package main

// The jail command opts in to starting the sandbox's init before Go's runtime: the constructor
// in jail/internal/spawn/spawn_early.c looks for the C symbol jail_early_opt_in, weakly, and
// starts nothing in a program that lacks it (tests, other programs linking package jail). cgo
// makes the symbol from the export below; nothing ever calls it.

import "C"

//export jail_early_opt_in
func jail_early_opt_in() {}
