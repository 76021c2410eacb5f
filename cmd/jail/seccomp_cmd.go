package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/seccomp"
)

const seccompUsage = "usage: jail seccomp export [-p PROFILE] [-o FILE]"

// runSeccomp is `jail seccomp export`: write the profile's compiled BPF program, for inspection
// or for `bwrap --seccomp FD`.
func runSeccomp(args []string, stdio jail.Stdio) int {
	if len(args) == 0 || args[0] != "export" {
		fmt.Fprintf(stdio.Err, "jail: seccomp: %s\n", seccompUsage)
		return exitFailure
	}
	fs := flag.NewFlagSet("jail seccomp export", flag.ContinueOnError)
	profile := fs.String("p", defaultProfile, "profile")
	fs.StringVar(profile, "profile", defaultProfile, "profile")
	output := fs.String("o", "-", "output file (- for standard output)")
	if status, done := parseOptionsOnly(fs, "seccomp export", seccompUsage, args[1:], stdio); done {
		return status
	}
	spec, err := resolve(*profile, nil, []string{"true"})
	if err != nil {
		return fail(stdio.Err, err)
	}
	var w io.Writer = stdio.Out
	if *output != "-" {
		f, err := os.Create(*output)
		if err != nil {
			return fail(stdio.Err, fmt.Errorf("seccomp export: %w", err))
		}
		defer f.Close()
		w = f
	}
	if err := seccomp.Export(w, jail.SeccompPolicy(spec)); err != nil {
		return fail(stdio.Err, fmt.Errorf("seccomp export: %w", err))
	}
	return 0
}
