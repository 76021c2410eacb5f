package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"

	"github.com/jail-sandbox/jail/hooks"
	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/plan"
	"github.com/jail-sandbox/jail/profiles"
)

const doctorUsage = "usage: jail doctor [--json]"

// runDoctor is `jail doctor [--json]`: one line per thing jail relies on, each OK, WARN or FAIL
// with what it changes and the fix, then one per agent harness installed here.
func runDoctor(args []string, stdio jail.Stdio) int {
	fs := flag.NewFlagSet("jail doctor", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	if status, done := parseOptionsOnly(fs, "doctor", doctorUsage, args, stdio); done {
		return status
	}
	trial, err := doctorTrial()
	if err != nil {
		return fail(stdio.Err, err)
	}
	return jail.PrintDoctor(stdio.Out, append(jail.Doctor(trial), harnessChecks()...), *asJSON)
}

// doctorTrial is the plan of the doctor's trial sandbox: the minimal profile, whose namespaces,
// /proc, /dev and root are the default run's, running this binary, granted alone, with
// --version. A timeout keeps the doctor from hanging where the sandbox would.
func doctorTrial() (*plan.Spec, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("doctor: find jail's own binary: %w", err)
	}
	overlay := profiles.Profile{Source: "jail doctor"}
	overlay.Filesystem.Read = []string{exe}
	overlay.Limits.Timeout = "10s"
	return resolve("minimal", &overlay, []string{exe, "--version"})
}

// harnessChecks is the static part of `jail hook check` for each harness whose CLI is on PATH.
// A harness without jail's hook is a warning (jail need not sit in front of every agent); a hook
// the harness would not run is a failure.
func harnessChecks() []jail.Check {
	e, err := hostEnv()
	if err != nil {
		return nil
	}
	var checks []jail.Check
	for _, name := range hooks.Harnesses() {
		if _, err := exec.LookPath(hooks.CLIName(name)); err != nil {
			continue
		}
		f := hooks.Inspect(name, e)
		c := jail.Check{Name: "hook " + name, Status: jail.Status(f.Status), Detail: f.Detail, Fix: f.Fix}
		if f.Problem != "" {
			c.Detail = f.Problem + ": " + f.Detail
		}
		if f.Problem == "hook missing" {
			c.Status = jail.StatusWarn
		}
		checks = append(checks, c)
	}
	return checks
}
