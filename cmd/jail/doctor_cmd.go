package main

import (
	"fmt"

	"github.com/jail-sandbox/jail/jail"
)

// runDoctor is `jail doctor [--json]`: one line per kernel capability jail relies on, each OK,
// WARN or FAIL with the fix.
func runDoctor(args []string, stdio jail.Stdio) int {
	asJSON := false
	for _, a := range args {
		switch a {
		case "--json", "-json":
			asJSON = true
		default:
			fmt.Fprintf(stdio.Err, "jail: doctor: unknown argument %q; usage: jail doctor [--json]\n", a)
			return exitFailure
		}
	}
	return jail.PrintDoctor(stdio.Out, jail.Doctor(), asJSON)
}
