package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/jail/client"
)

// The commands on persistent sandboxes but create, exec and cp: each is one call of package
// client, which the HTTP API's routes call too.

const lsUsage = `Usage: jail ls [--json]

Lists your persistent sandboxes: running ones, and the records of ones that ended (jail prune
removes those).
`

func runLs(args []string, stdio jail.Stdio) int {
	fs := flag.NewFlagSet("jail ls", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	if status, done := parseOptionsOnly(fs, "ls", strings.TrimSpace(lsUsage), args, stdio); done {
		return status
	}
	list, err := client.New().List(client.ListOptions{})
	if err != nil {
		return failAPI(stdio, err)
	}
	if *asJSON {
		return printJSON(stdio, api.ListResponse{Sandboxes: list})
	}
	w := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tNAME\tSTATE\tPROFILE\tCREATED\tLAST USED\tWORKDIR")
	for _, sb := range list {
		used := "-"
		if sb.LastUsedAt != nil {
			used = ago(*sb.LastUsedAt)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", sb.ID, or(sb.Name, "-"), sb.State, sb.Profile, ago(sb.CreatedAt), used, sb.Workdir)
	}
	w.Flush()
	return 0
}

const inspectUsage = `Usage: jail inspect ID|NAME

Prints a persistent sandbox as JSON: its profile, grants, network, state, times and processes.
`

func runInspect(args []string, stdio jail.Stdio) int {
	fs := flag.NewFlagSet("jail inspect", flag.ContinueOnError)
	if status, done := parseSubcommand(fs, "inspect", inspectUsage, args, stdio); done {
		return status
	}
	if fs.NArg() != 1 {
		fmt.Fprint(stdio.Err, "jail: inspect: give one sandbox: jail inspect ID\n")
		return exitFailure
	}
	sb, err := client.New().Get(fs.Arg(0))
	if err != nil {
		return failAPI(stdio, err)
	}
	return printJSON(stdio, sb)
}

const rmUsage = `Usage: jail rm [-f] ID|NAME...

Removes persistent sandboxes: every process, socket and file of theirs. Without -f a sandbox
where a command started by jail exec (or the API) still runs is left alone.
`

func runRm(args []string, stdio jail.Stdio) int {
	fs := flag.NewFlagSet("jail rm", flag.ContinueOnError)
	force := fs.Bool("f", false, "")
	fs.BoolVar(force, "force", false, "")
	if status, done := parseSubcommand(fs, "rm", rmUsage, args, stdio); done {
		return status
	}
	if fs.NArg() == 0 {
		fmt.Fprint(stdio.Err, "jail: rm: give the sandboxes to remove: jail rm [-f] ID...\n")
		return exitFailure
	}
	status := 0
	c := client.New()
	for _, id := range fs.Args() {
		if err := c.Delete(id, *force); err != nil {
			status = failAPI(stdio, err)
		} else if cs, err := c.Changes(id); err == nil && len(cs.Changes) > 0 {
			fmt.Fprintf(stdio.Err, "jail: %d changes of sandbox %s wait in change set %s: jail diff %s | jail apply %s | jail discard %s\n",
				len(cs.Changes), id, cs.ID, id, id, id)
		}
	}
	return status
}

const pruneUsage = `Usage: jail prune

Removes the records of persistent sandboxes that are no longer running (their spawner or keeper
died) and the leftovers of interrupted creates, and prints their ids.
`

func runPrune(args []string, stdio jail.Stdio) int {
	fs := flag.NewFlagSet("jail prune", flag.ContinueOnError)
	if status, done := parseOptionsOnly(fs, "prune", strings.TrimSpace(pruneUsage), args, stdio); done {
		return status
	}
	removed, err := client.New().Prune()
	for _, id := range removed {
		fmt.Fprintln(stdio.Out, id)
	}
	if err != nil {
		return failAPI(stdio, err)
	}
	return 0
}

// parseSubcommand is parseFlags for a subcommand that takes arguments after its options: -h and
// --help print its usage on stdout (status 0); a mistake is jail's one line (125). done says the
// caller returns status.
func parseSubcommand(fs *flag.FlagSet, cmd, usage string, args []string, stdio jail.Stdio) (status int, done bool) {
	switch err := parseFlags(fs, cmd, args); {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdio.Out, usage)
		return 0, true
	case err != nil:
		return fail(stdio.Err, err), true
	}
	return 0, false
}

// failAPI prints an API error as jail's one line and returns its exit status.
func failAPI(stdio jail.Stdio, err error) int {
	e := api.AsError(err)
	fmt.Fprintln(stdio.Err, e.Message)
	if e.Exit != 0 {
		return e.Exit
	}
	return exitFailure
}

// ago says how long ago t was, to the second.
func ago(t time.Time) string {
	d := time.Since(t).Round(time.Second)
	if d < time.Second {
		return "just now"
	}
	return strings.TrimSuffix(strings.TrimSuffix(d.String(), "0s"), "0m") + " ago"
}

func or(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}
