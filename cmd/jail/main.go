// Command jail runs a command in a fresh sandbox built from a declarative profile.
package main

import (
	"os"

	"github.com/jail-sandbox/jail/jail"
)

func main() {
	// The sandbox's init is this same binary, re-executed with a hidden argv or forked before Go's
	// runtime started (jail/internal/spawn/spawn_early.c): dispatch it before anything else runs.
	jail.MaybeInit()
	os.Exit(Run(os.Args, jail.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
}
