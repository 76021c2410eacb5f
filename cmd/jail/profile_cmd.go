package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/profiles"
	"github.com/jail-sandbox/jail/seccomp"
)

const profileUsage = "usage: jail profile list | show NAME|FILE | check FILE..."

// runProfile is `jail profile`: list the profiles jail can find, show one fully resolved, or
// check files without running anything.
func runProfile(args []string, stdio jail.Stdio) int {
	if len(args) == 0 {
		fmt.Fprintf(stdio.Err, "jail: profile: no subcommand; %s\n", profileUsage)
		return exitFailure
	}
	host, err := loadHost()
	if err != nil {
		return fail(stdio.Err, err)
	}
	switch sub, rest := args[0], args[1:]; {
	case sub == "list" && len(rest) == 0:
		tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
		for _, e := range profiles.List(host) {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Name, e.Source, e.Description)
		}
		tw.Flush()
		return 0
	case sub == "show" && len(rest) == 1:
		return showProfile(rest[0], host, stdio)
	case sub == "check" && len(rest) > 0:
		return checkProfiles(rest, host, stdio)
	default:
		fmt.Fprintf(stdio.Err, "jail: profile %s: bad arguments; %s\n", sub, profileUsage)
		return exitFailure
	}
}

// showProfile prints a profile with extends applied and variables expanded, as TOML, followed by
// the effective syscall policy it compiles to, as comments.
func showProfile(ref string, host profiles.Host, stdio jail.Stdio) int {
	p, err := profiles.Load(ref, host)
	if err != nil {
		return fail(stdio.Err, err)
	}
	spec, err := profiles.Resolve(p, host, []string{"true"})
	if err != nil {
		return fail(stdio.Err, err)
	}
	if p, err = profiles.Expand(p, host); err != nil {
		return fail(stdio.Err, err)
	}
	text, err := profiles.Format(p)
	if err != nil {
		return fail(stdio.Err, err)
	}
	policy, err := seccomp.Describe(jail.SeccompPolicy(spec))
	if err != nil {
		return fail(stdio.Err, fmt.Errorf("describe the syscall policy: %w", err))
	}
	stdio.Out.Write(text)
	writePolicy(stdio.Out, policy)
	return 0
}

// writePolicy prints the effective seccomp policy as TOML comments.
func writePolicy(w io.Writer, s seccomp.Summary) {
	fmt.Fprintf(w, "\n# Effective syscall policy: mode %q; a denied call gets %s; other architectures: %s\n", s.Mode, s.Action, s.ForeignArch)
	if s.Mode == seccomp.ModeDeny {
		fmt.Fprintf(w, "#   denied: every syscall not allowed (%d known)\n", len(s.Denied))
	} else if len(s.Denied) > 0 {
		fmt.Fprintf(w, "#   denied: %s\n", strings.Join(s.Denied, " "))
	}
	if len(s.ENOSYS) > 0 {
		fmt.Fprintf(w, "#   ENOSYS (libc falls back): %s\n", strings.Join(s.ENOSYS, " "))
	}
	for _, c := range s.Checks {
		fmt.Fprintf(w, "#   %s: denies %s\n", c.Syscall, c.Denies)
	}
	for _, wide := range s.Widened {
		fmt.Fprintf(w, "# WIDENS: syscalls: %s\n", wide)
	}
}

// checkProfiles loads and resolves each file as a run would, and reports every failure: all of
// a file's, each with its line and key.
func checkProfiles(files []string, host profiles.Host, stdio jail.Stdio) int {
	status := 0
	for _, file := range files {
		spec, err := profiles.Check(file, host)
		if err != nil {
			status = fail(stdio.Err, err)
			continue
		}
		for _, w := range spec.Warnings {
			fmt.Fprintf(stdio.Out, "%s: warning: %s\n", file, w)
		}
		fmt.Fprintf(stdio.Out, "%s: ok\n", file)
	}
	return status
}
