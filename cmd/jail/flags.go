package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/jail-sandbox/jail/internal/suggest"
	"github.com/jail-sandbox/jail/jail"
)

// parseFlags parses args into fs without printing anything: Go's flag package would print its
// error and then the whole usage, where jail prints one line. It returns flag.ErrHelp for -h
// when fs defines no help flag of its own, and otherwise an error that names the option as it
// was typed, says which known option is close to an unknown one, and points at --help.
// cmd names the subcommand in the message ("" for jail itself).
func parseFlags(fs *flag.FlagSet, cmd string, args []string) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown option " + dashed(name)
		if near := suggest.Closest(name, flagNames(fs), min(2, (len(name)-1)/2)); near != "" {
			msg += " (did you mean " + dashed(near) + "?)"
		}
	} else if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		msg = "option " + dashed(name) + " needs a value"
	} else if before, after, ok := strings.Cut(msg, " for flag -"); ok {
		name, reason, _ := strings.Cut(after, ": ")
		msg = before + " for " + dashed(name) + ": " + reason // invalid value "x" for --timeout: …
	}
	if cmd != "" {
		msg = cmd + ": " + msg
	}
	return errors.New(msg + "; see jail --help")
}

// parseOptionsOnly is parseFlags for a subcommand that takes nothing but options: -h prints its
// usage on stdout (status 0); a mistake, or an argument, is jail's one line (125). done says the
// caller returns status.
func parseOptionsOnly(fs *flag.FlagSet, cmd, usage string, args []string, stdio jail.Stdio) (status int, done bool) {
	switch err := parseFlags(fs, cmd, args); {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(stdio.Out, usage)
		return 0, true
	case err != nil:
		return fail(stdio.Err, err), true
	case fs.NArg() != 0:
		return fail(stdio.Err, fmt.Errorf("%s: unexpected argument %q; %s", cmd, fs.Arg(0), usage)), true
	}
	return 0, false
}

// dashed writes a flag name as the usage does: -p, --profile.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagNames lists the names fs defines, sorted.
func flagNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}
