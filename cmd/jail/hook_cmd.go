package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/jail-sandbox/jail/hooks"
	"github.com/jail-sandbox/jail/jail"
)

// exitHookUsage is the status of a misconfigured `jail hook`: every supported harness reads exit 2
// from a pre-tool hook as "block this tool call", so a broken setup fails closed instead of
// letting commands run unsandboxed.
const exitHookUsage = 2

// runHook is `jail hook HARNESS [-p PROFILE]`: it answers the harness's pre-tool event on stdin
// with the command rewritten to run under jail (package hooks does the harness-specific JSON).
func runHook(args []string, stdio jail.Stdio) int {
	fs := flag.NewFlagSet("jail hook", flag.ContinueOnError)
	profile := fs.String("p", defaultProfile, "")
	fs.StringVar(profile, "profile", defaultProfile, "")
	usage := fmt.Sprintf("usage: jail hook HARNESS [-p PROFILE]   (HARNESS: %q)", hooks.Harnesses())
	// Flags may come before or after HARNESS.
	err := parseFlags(fs, "hook", args)
	harness := fs.Arg(0)
	if err == nil && fs.NArg() > 0 {
		err = parseFlags(fs, "hook", fs.Args()[1:])
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(stdio.Out, usage)
		return 0
	case err != nil:
		fmt.Fprintf(stdio.Err, "jail: %s\n", err)
		return exitHookUsage
	case harness == "" || fs.NArg() != 0:
		fmt.Fprintf(stdio.Err, "jail: hook: %s\n", usage)
		return exitHookUsage
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stdio.Err, "jail hook: find the jail binary: %s\n", err)
		return exitHookUsage
	}
	return hooks.Run(harness, *profile, self, stdio.In, stdio.Out, stdio.Err)
}

// runShell is the shell shim: the binary invoked as jail-sh, jail-bash (see hooks.ShimShell),
// with the profile its name gives, or `jail shell [-p PROFILE] ARGS…`. ARGS are the shell's own.
// The environment never picks the profile: see hooks.CheckShimEnv.
func runShell(name, shell, profile string, args []string, stdio jail.Stdio) int {
	if err := hooks.CheckShimEnv(os.Getenv); err != nil {
		fmt.Fprintf(stdio.Err, "%s: %s\n", name, err)
		return exitFailure
	}
	jailArgs, err := hooks.ShellArgsFor(shell, args, profile)
	if err != nil {
		fmt.Fprintf(stdio.Err, "%s: %s\n", name, err)
		return 2 // what sh itself exits with on a usage error
	}
	return runCommand(jailArgs, stdio)
}

// runShellCommand is `jail shell [-p|--profile PROFILE] ARGS…`: the profile, if any, comes first.
func runShellCommand(args []string, stdio jail.Stdio) int {
	profile := hooks.DefaultProfile
	if len(args) >= 2 && (args[0] == "-p" || args[0] == "--profile") {
		profile, args = args[1], args[2:]
	}
	return runShell("jail shell", "sh", profile, args, stdio)
}
