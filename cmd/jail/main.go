// Command jail runs a command in a fresh sandbox built from a declarative profile.
package main

import (
	"os"

	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/jail/persist"
)

func main() {
	// The sandbox's init is this same binary, re-executed with a hidden argv or forked before Go's
	// runtime started (jail/internal/spawn/spawn_early.c): dispatch it before anything else runs.
	jail.MaybeInit()
	// A persistent sandbox's keeper starts this binary again under other names, for the egress
	// proxy and an HTTP connection's handler; its spawner, for file operations inside.
	persist.MaybeHelper()
	os.Exit(Run(os.Args, jail.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
}
