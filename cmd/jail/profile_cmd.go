package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/profiles"
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

// showProfile prints a profile with extends applied and variables expanded, as TOML.
func showProfile(ref string, host profiles.Host, stdio jail.Stdio) int {
	p, err := profiles.Load(ref, host)
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
	stdio.Out.Write(text)
	return 0
}

// checkProfiles loads and resolves each file as a run would, and reports every failure.
func checkProfiles(files []string, host profiles.Host, stdio jail.Stdio) int {
	status := 0
	for _, file := range files {
		p, err := profiles.Load(file, host)
		var spec *profiles.Spec
		if err == nil {
			spec, err = profiles.Resolve(p, host, []string{"true"})
		}
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
