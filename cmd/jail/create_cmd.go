package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/jail/persist"
	"github.com/jail-sandbox/jail/profiles"
)

const createUsage = `Usage: jail create [-p PROFILE] [--ro PATH] [--rw PATH] [--hide PATH] [--tmpfs PATH]
                   [--net MODE] [--allow-host PATTERN] [--allow-private] [--env NAME[=VALUE]]
                   [--cwd DIR] [--cache TOOL,...] [--timeout DURATION] [--workspace MODE] [--name NAME]
                   [--label KEY=VALUE] [--idle-timeout DURATION] [--ttl DURATION] [--json] [-v]

Creates a persistent sandbox from a profile, as a run would build it, and prints its id once it
is ready for jail exec. The current directory is the profile's $CWD. --timeout is the default
timeout of each command; --idle-timeout removes the sandbox after so long without use, --ttl
so long after create. --workspace overlay keeps the working directory's writes in a change set
named after the sandbox (jail diff, jail apply, jail discard ID|NAME). --json prints the sandbox as jail inspect does (and errors as JSON too).
`

// createFlags are `jail create`'s options: a run's sandbox flags, then create's own.
type createFlags struct {
	profile     string
	overlay     profiles.Profile
	name        string
	labels      stringList
	idleTimeout string
	ttl         string
	json        bool
	verbose     bool
}

func newCreateFlagSet() (*flag.FlagSet, *createFlags) {
	f := &createFlags{}
	fs := flag.NewFlagSet("jail create", flag.ContinueOnError)
	sandboxFlags(fs, &f.profile, &f.overlay)
	fs.StringVar(&f.name, "name", "", "")
	fs.Var(&f.labels, "label", "")
	fs.StringVar(&f.idleTimeout, "idle-timeout", "", "")
	fs.StringVar(&f.ttl, "ttl", "", "")
	fs.BoolVar(&f.json, "json", false, "")
	fs.BoolVar(&f.verbose, "v", false, "")
	fs.BoolVar(&f.verbose, "verbose", false, "")
	return fs, f
}

// runCreate is `jail create`. Its constructor has already forked the keeper, which forked init
// (spawn/keeper.c); this process sends the plan, waits for the spawner, records the sandbox and
// hands it to the keeper. Whatever fails before that, the keeper removes all it made.
func runCreate(args []string, stdio jail.Stdio) int {
	k, kerr := jail.TakeKeeper()
	if k != nil {
		defer k.Close() // a no-op once the keeper holds the sandbox; else it removes it all
	}
	fs, f := newCreateFlagSet()
	if status, done := parseSubcommand(fs, "create", createUsage, args, stdio); done {
		return status
	}
	sb, err := create(k, kerr, fs, f, stdio)
	if err != nil {
		e := api.AsError(err)
		if f.json {
			json.NewEncoder(stdio.Out).Encode(api.ErrorBody{Error: e})
		}
		return fail(stdio.Err, errors.New(strings.TrimPrefix(e.Message, "jail: ")))
	}
	if f.json {
		return printJSON(stdio, sb)
	}
	fmt.Fprintln(stdio.Out, sb.ID)
	return 0
}

// create builds the sandbox.
func create(k *jail.Keeper, kerr error, fs *flag.FlagSet, f *createFlags, stdio jail.Stdio) (*api.Sandbox, error) {
	switch {
	case fs.NArg() > 0:
		return nil, api.Errorf(api.InvalidArgument, "create takes no command (%q): give it to jail exec", fs.Arg(0))
	case kerr != nil:
		return nil, kerr
	case k == nil:
		return nil, api.Errorf(api.Internal, "create: no keeper started (run jail create itself, not through a wrapper that changes its arguments)")
	}
	host, err := loadHost()
	if err != nil {
		return nil, api.Errorf(api.Internal, "%s", err)
	}
	id := persist.NewID()
	host.ChangeSet = id // an overlay workspace's change set is the sandbox's
	spec, err := resolveOn(host, f.profile, &f.overlay, persist.Argv)
	if err != nil {
		return nil, api.Errorf(api.InvalidArgument, "%s", err)
	}
	return persist.Create(k, spec, persist.Options{ID: id, Name: f.name, Labels: f.labels, IdleTimeout: f.idleTimeout, TTL: f.ttl, Verbose: f.verbose, Warnings: stdio.Err})
}
