package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jail-sandbox/jail/hooks"
	"github.com/jail-sandbox/jail/jail"
)

// exitHookUsage is the status of a misconfigured `jail hook`: every supported harness reads exit 2
// from a pre-tool hook as "block this tool call", so a broken setup fails closed instead of
// letting commands run unsandboxed.
const exitHookUsage = 2

// hostEnv is what package hooks reads from this host: home, working directory, environment, and
// this jail binary (its real path: the one a hook should run).
func hostEnv() (hooks.Env, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return hooks.Env{}, err
	}
	dir, err := os.Getwd()
	if err != nil {
		return hooks.Env{}, err
	}
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return hooks.Env{}, fmt.Errorf("find the jail binary: %w", err)
	}
	return hooks.Env{Home: home, Dir: dir, Getenv: os.Getenv, Jail: self}, nil
}

// runHook is `jail hook HARNESS [-p PROFILE]`, `jail hook install …` and `jail hook check …`.
// The first answers the harness's pre-tool event on stdin with the command rewritten to run under
// jail (package hooks does the harness-specific JSON).
func runHook(args []string, stdio jail.Stdio) int {
	if len(args) > 0 {
		switch args[0] {
		case "install":
			return runHookInstall(args[1:], stdio)
		case "check":
			return runHookCheck(args[1:], stdio)
		}
	}
	fs := flag.NewFlagSet("jail hook", flag.ContinueOnError)
	profile := fs.String("p", defaultProfile, "")
	fs.StringVar(profile, "profile", defaultProfile, "")
	usage := fmt.Sprintf("usage: jail hook HARNESS [-p PROFILE], jail hook install HARNESS [--profile PROFILE] [--scope user|project], "+
		"jail hook check HARNESS [-v]   (HARNESS: %q)", hooks.Harnesses())
	harness, status, done := parseWithHarness(fs, "hook", usage, args, exitHookUsage, stdio)
	if done {
		return status
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stdio.Err, "jail hook: find the jail binary: %s\n", err)
		return exitHookUsage
	}
	return hooks.Run(harness, *profile, self, stdio.In, stdio.Out, stdio.Err)
}

// parseWithHarness parses fs's options before and after the one HARNESS argument of `jail hook`
// and its subcommands: -h prints usage on stdout (status 0); a mistake is jail's one line on
// stderr, with status bad. done says the caller returns status.
func parseWithHarness(fs *flag.FlagSet, cmd, usage string, args []string, bad int, stdio jail.Stdio) (harness string, status int, done bool) {
	err := parseFlags(fs, cmd, args)
	harness = fs.Arg(0)
	if err == nil && fs.NArg() > 0 {
		err = parseFlags(fs, cmd, fs.Args()[1:])
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(stdio.Out, usage)
		return "", 0, true
	case err != nil:
		fmt.Fprintf(stdio.Err, "jail: %s\n", err)
		return "", bad, true
	case harness == "" || fs.NArg() != 0:
		fmt.Fprintf(stdio.Err, "jail: %s: %s\n", cmd, usage)
		return "", bad, true
	}
	return harness, 0, false
}

// runHookInstall is `jail hook install HARNESS [--profile P] [--scope user|project]`.
func runHookInstall(args []string, stdio jail.Stdio) int {
	fs := flag.NewFlagSet("jail hook install", flag.ContinueOnError)
	profile := fs.String("profile", defaultProfile, "")
	fs.StringVar(profile, "p", defaultProfile, "")
	scope := fs.String("scope", string(hooks.ScopeUser), "")
	usage := fmt.Sprintf("usage: jail hook install HARNESS [--profile PROFILE] [--scope user|project]   (HARNESS: %q)", hooks.Harnesses())
	harness, status, done := parseWithHarness(fs, "hook install", usage, args, exitFailure, stdio)
	if done {
		return status
	}
	e, err := hostEnv()
	if err != nil {
		return fail(stdio.Err, fmt.Errorf("hook install: %w", err))
	}
	installed, err := hooks.Install(harness, *profile, hooks.Scope(*scope), e)
	for _, line := range installed.Lines {
		fmt.Fprintln(stdio.Out, line)
	}
	if err != nil {
		return fail(stdio.Err, fmt.Errorf("hook install %s: %w", harness, err))
	}
	for _, todo := range installed.Todo {
		fmt.Fprintln(stdio.Out, "to do: "+todo)
	}
	fmt.Fprintf(stdio.Out, "check it live: jail hook check %s\n", harness)
	return 0
}

// exitCheckFailed is `jail hook check`'s status when the command did not provably run in jail.
const exitCheckFailed = 1

// runHookCheck is `jail hook check HARNESS [-v]`: exit 0 only when the installed CLI's shell
// command ran inside jail; else one line why and one with the fix.
func runHookCheck(args []string, stdio jail.Stdio) int {
	fs := flag.NewFlagSet("jail hook check", flag.ContinueOnError)
	verbose := fs.Bool("v", false, "")
	usage := fmt.Sprintf("usage: jail hook check HARNESS [-v]   (HARNESS: %q)", hooks.Harnesses())
	harness, status, done := parseWithHarness(fs, "hook check", usage, args, exitFailure, stdio)
	if done {
		return status
	}
	e, err := hostEnv()
	if err != nil {
		return fail(stdio.Err, fmt.Errorf("hook check: %w", err))
	}
	r := hooks.Check(context.Background(), harness, e, hooks.CheckOptions{})
	if *verbose {
		for _, line := range r.Evidence {
			fmt.Fprintln(stdio.Err, "jail hook check: "+line)
		}
	}
	if r.OK {
		fmt.Fprintf(stdio.Out, "ok: %s %s ran the model's shell command inside jail\n", harness, r.Version)
		return 0
	}
	fmt.Fprintf(stdio.Out, "FAIL: %s %s: %s\n", harness, r.Version, r.Reason)
	if r.Fix != "" {
		fmt.Fprintf(stdio.Out, "fix: %s\n", r.Fix)
	}
	return exitCheckFailed
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
