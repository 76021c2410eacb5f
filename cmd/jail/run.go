package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/plan"
	"github.com/jail-sandbox/jail/profiles"
	"github.com/jail-sandbox/jail/workspace"
)

// runFlags are the options of `jail [OPTIONS] [--] COMMAND`. Everything that describes the
// sandbox goes into overlay, a Profile merged last over the named one, so a flag and a profile
// key are one thing and cannot drift; only how jail itself behaves stays outside it: what it
// says about the run (opts, beside the plan) and what it does instead of running one.
type runFlags struct {
	profile string
	overlay profiles.Profile
	opts    jail.Options
	dryRun  bool
	help    bool
	version bool
	report  reportFlags // report.go
}

func newRunFlagSet() (*flag.FlagSet, *runFlags) {
	f := &runFlags{}
	fs := flag.NewFlagSet("jail", flag.ContinueOnError)
	sandboxFlags(fs, &f.profile, &f.overlay)
	o := &f.overlay
	fs.BoolVar(&f.opts.Quiet, "q", false, "")
	fs.BoolVar(&f.opts.Quiet, "quiet", false, "")
	fs.StringVar(&o.Sandbox.Fallback, "fallback", "", "")
	fs.BoolFunc("allow-weaker", "", func(string) error {
		yes := true
		o.Sandbox.AllowWeaker = &yes
		return nil
	})
	fs.BoolVar(&f.opts.Verbose, "v", false, "")
	fs.BoolVar(&f.opts.Verbose, "verbose", false, "")
	fs.BoolVar(&f.opts.Explain, "explain", false, "")
	fs.BoolVar(&f.dryRun, "dry-run", false, "")
	fs.BoolVar(&f.help, "h", false, "")
	fs.BoolVar(&f.help, "help", false, "")
	fs.BoolVar(&f.version, "version", false, "")
	f.report.register(fs)
	return fs, f
}

// sandboxFlags registers the flags that describe a sandbox, which a run and `jail create` share:
// the profile, and every grant, network, cache and limit flag, each writing into overlay, a
// Profile merged last over the named one.
func sandboxFlags(fs *flag.FlagSet, profile *string, overlay *profiles.Profile) {
	o := overlay
	o.Source = "command line"
	fs.StringVar(profile, "p", defaultProfile, "")
	fs.StringVar(profile, "profile", defaultProfile, "")
	fs.Var((*pathList)(&o.Filesystem.Read), "ro", "")
	fs.Var((*pathList)(&o.Filesystem.Write), "rw", "")
	fs.Var((*pathList)(&o.Filesystem.Hide), "hide", "")
	fs.Var((*pathList)(&o.Filesystem.Tmpfs), "tmpfs", "")
	fs.StringVar(&o.Network.Mode, "net", "", "")
	fs.Func("allow-host", "", func(pattern string) error {
		o.Network.Mode = "proxy"
		o.Network.Allow = append(o.Network.Allow, pattern)
		return nil
	})
	fs.BoolFunc("allow-private", "", func(string) error {
		o.Network.AllowPrivate = new(true)
		return nil
	})
	fs.Func("cache", "", func(list string) error {
		if o.Cache.Tools == nil {
			o.Cache.Tools = []string{} // set: replaces the profile's list ("none" leaves it empty)
		}
		for _, tool := range strings.Split(list, ",") {
			if tool != "" && tool != "none" {
				o.Cache.Tools = append(o.Cache.Tools, tool)
			}
		}
		return nil
	})
	fs.Var((*stringList)(&o.Process.Env), "env", "")
	fs.StringVar(&o.Process.Cwd, "cwd", "", "")
	fs.StringVar(&o.Limits.Timeout, "timeout", "", "")
	fs.StringVar(&o.Filesystem.Workspace, "workspace", "", "")
}

// runCommand resolves the plan for one command and runs it in a sandbox.
func runCommand(args []string, stdio jail.Stdio) int {
	fs, f := newRunFlagSet()
	if err := parseFlags(fs, "", args); err != nil {
		return fail(stdio.Err, err) // -h and --help are flags of their own
	}
	switch {
	case f.help:
		fmt.Fprint(stdio.Out, usage)
		return 0
	case f.version:
		fmt.Fprintln(stdio.Out, jail.Version())
		return 0
	case fs.NArg() == 0:
		fmt.Fprintf(stdio.Err, "jail: no command given; usage: jail [OPTIONS] [--] COMMAND [ARG...] (see jail --help)\n")
		return exitFailure
	}
	rep, err := f.report.open()
	if err != nil {
		return fail(stdio.Err, err)
	}
	// The sandbox's init starts now: its start-up overlaps loading and resolving the profile.
	// Its namespaces are those of every built-in profile, or of --net host; a plan that asks
	// for others gets another init.
	var early *jail.Early
	if !f.dryRun {
		early = jail.Prestart(plan.NamespacesFor(f.overlay.Network.Mode), stdio)
		defer early.Discard()
	}
	spec, err := resolve(f.profile, &f.overlay, fs.Args())
	if err != nil {
		return rep.failed(stdio, f.profile, fs.Args(), err)
	}
	printWarnings(stdio.Err, spec.Warnings, f.opts.Quiet)
	if f.dryRun {
		return printJSON(stdio, spec)
	}
	ws, err := workspace.Begin(spec)
	if err != nil {
		return rep.failed(stdio, f.profile, fs.Args(), err)
	}
	status, err := rep.run(spec, f.opts, stdio, early)
	if ws != nil {
		var ran *int
		if err == nil {
			ran = &status
		}
		finishWorkspace(stdio.Err, ws, ran, f.opts.Quiet)
	}
	if err != nil {
		return fail(stdio.Err, err)
	}
	return status
}

// printWarnings prints the profile's warnings, one line each, or with quiet only the first, in a
// line that counts the rest.
func printWarnings(w io.Writer, warnings []string, quiet bool) {
	if quiet && len(warnings) > 1 {
		fmt.Fprintf(w, "jail: warning: %s (and %d more: run without -q to see them)\n", warnings[0], len(warnings)-1)
		return
	}
	for _, warning := range warnings {
		fmt.Fprintf(w, "jail: warning: %s\n", warning)
	}
}

// resolve loads the named profile, lays the command line's overlay (if any) over it and
// resolves the result against this host into the plan.
func resolve(ref string, overlay *profiles.Profile, argv []string) (*plan.Spec, error) {
	host, err := loadHost()
	if err != nil {
		return nil, err
	}
	return resolveOn(host, ref, overlay, argv)
}

// resolveOn is resolve on a host described already.
func resolveOn(host profiles.Host, ref string, overlay *profiles.Profile, argv []string) (*plan.Spec, error) {
	p, err := profiles.Load(ref, host)
	if err != nil {
		return nil, err
	}
	if overlay != nil {
		p = profiles.Merge(p, overlay)
	}
	return profiles.Resolve(p, host, argv)
}

func printJSON(stdio jail.Stdio, v any) int {
	enc := json.NewEncoder(stdio.Out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fail(stdio.Err, fmt.Errorf("write plan: %w", err))
	}
	return 0
}
