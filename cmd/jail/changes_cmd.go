package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/workspace"
)

// The change sets of overlay workspaces (--workspace overlay): `jail changes` lists them, `jail
// diff` shows one, `jail apply` writes one into its tree, `jail discard` removes one. Each takes
// a change set's ID (or a prefix of at least 4 characters), or a persistent sandbox's name,
// whose change set has its id; without one, the newest change set whose tree holds the current
// directory.

const changesUsage = `usage: jail changes
       jail diff [ID|NAME] [PATH...]
       jail apply [ID|NAME] [PATH...] [--allow-git] [--allow-protected] [--allow-autorun] [--allow-links] [--allow-special] [--overwrite]
       jail discard [ID|NAME]`

// exitRefused is apply's status when it wrote nothing because changes were refused or conflict.
const exitRefused = 1

// userStore is the change-set store of the user running jail.
var userStore = workspace.UserStore

// runChanges is `jail changes`.
func runChanges(args []string, stdio jail.Stdio) int {
	if helpAsked(args, stdio) {
		return 0
	}
	if len(args) > 0 {
		fmt.Fprintf(stdio.Err, "jail: changes: unexpected argument %q; %s\n", args[0], changesUsage)
		return exitFailure
	}
	store, err := userStore()
	if err != nil {
		return fail(stdio.Err, err)
	}
	all, err := store.List()
	if err != nil {
		return fail(stdio.Err, err)
	}
	tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tCHANGES\tSTARTED\tTREE\tCOMMAND")
	for _, cs := range all {
		if cs.Err != nil {
			fmt.Fprintf(tw, "%s\tdamaged\t-\t-\t-\t%s\n", cs.ID, cs.Err)
			continue
		}
		m := cs.Manifest
		count := "-"
		if changes, err := cs.Changes(); err == nil {
			count = fmt.Sprint(len(changes))
		}
		command := commandLine(m.Command)
		if m.Sandbox {
			command = "sandbox " + cs.SandboxName() // jail create: its commands are jail exec's
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cs.ID, changeSetState(cs), count,
			m.Started.Local().Format("2006-01-02 15:04"), m.Tree, command)
	}
	tw.Flush()
	return 0
}

// changeSetState says whether a change set's run is going on, ended (with its status), or was
// cut short.
func changeSetState(cs *workspace.ChangeSet) string {
	switch m := cs.Manifest; {
	case cs.Running():
		return "running"
	case m.Sandbox:
		return "removed" // the sandbox; its change set waits
	case m.Status != nil:
		return fmt.Sprintf("exit %d", *m.Status)
	case m.Ended != nil:
		return "jail failed"
	}
	return "interrupted"
}

// commandLine shows argv on one line, cut to a width a table can take.
func commandLine(argv []string) string {
	s := strings.Join(argv, " ")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// changeSetArgs picks the change set named by args' first element, when it names one, and
// returns it with the rest of args as paths relative to its tree. A first argument that names no
// change set is a path, unless it looks like an ID (hex digits) and is no path here either: then
// it is a mistyped ID, and an error.
func changeSetArgs(args []string) (*workspace.ChangeSet, []string, error) {
	store, err := userStore()
	if err != nil {
		return nil, nil, err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, nil, fmt.Errorf("working directory: %w", err)
	}
	var cs *workspace.ChangeSet
	if len(args) > 0 {
		_, statErr := os.Lstat(args[0])
		cs, err = store.Open(args[0])
		switch {
		case err == nil:
			args = args[1:]
		case !errors.Is(err, workspace.ErrNoChangeSet) || statErr != nil && looksLikeID(args[0]):
			return nil, nil, err
		}
	}
	if cs == nil {
		dir, err := filepath.EvalSymlinks(cwd)
		if err != nil {
			return nil, nil, fmt.Errorf("working directory: %w", err)
		}
		if cs, err = store.Latest(dir); err != nil {
			return nil, nil, err
		}
	}
	var paths []string
	for _, a := range args {
		rel, err := cs.Rel(a, cwd)
		if err != nil {
			return nil, nil, err
		}
		paths = append(paths, rel)
	}
	return cs, paths, nil
}

// looksLikeID reports whether s could be a (prefix of a) change set's ID: hex digits, or a
// sandbox's id.
func looksLikeID(s string) bool {
	return strings.Trim(strings.TrimPrefix(s, "jb_"), "0123456789abcdef") == ""
}

// parseInterleaved parses fs's flags wherever they stand among the positional arguments, which
// it returns; after "--" everything is positional.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// helpAsked prints the usage when args ask for it (-h, --help, alone).
func helpAsked(args []string, stdio jail.Stdio) bool {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprintln(stdio.Out, changesUsage)
		return true
	}
	return false
}

// flagStatus is the exit status after a flag set's error, which it has printed with the usage:
// 0 for -h, jail's own failure otherwise.
func flagStatus(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return exitFailure
}

// changesFlags is the flag set of a change-set subcommand.
func changesFlags(name string, stdio jail.Stdio) *flag.FlagSet {
	fs := flag.NewFlagSet("jail "+name, flag.ContinueOnError)
	fs.SetOutput(stdio.Err)
	fs.Usage = func() { fmt.Fprintln(stdio.Err, changesUsage) }
	return fs
}

// runDiff is `jail diff [ID] [PATH...]`: the change set as a git-style patch.
func runDiff(args []string, stdio jail.Stdio) int {
	positional, err := parseInterleaved(changesFlags("diff", stdio), args)
	if err != nil {
		return flagStatus(err)
	}
	cs, paths, err := changeSetArgs(positional)
	if err != nil {
		return fail(stdio.Err, fmt.Errorf("diff: %w", err))
	}
	changes, err := cs.Select(paths)
	if err != nil {
		return fail(stdio.Err, fmt.Errorf("diff %s: %w", cs.ID, err))
	}
	if err := workspace.Diff(stdio.Out, changes); err != nil {
		return fail(stdio.Err, fmt.Errorf("diff %s: %w", cs.ID, err))
	}
	for _, c := range cs.Conflicts(changes) {
		fmt.Fprintf(stdio.Err, "jail: diff %s: %s\n", cs.ID, c)
	}
	return 0
}

// runApply is `jail apply [ID] [PATH...]`: write the change set into its tree.
func runApply(args []string, stdio jail.Stdio) int {
	fs := changesFlags("apply", stdio)
	var opt workspace.ApplyOptions
	for _, c := range workspace.Classes() {
		fs.BoolFunc(strings.TrimPrefix(c.Flag(), "--"), "", func(string) error {
			opt.Allow |= c
			return nil
		})
	}
	fs.BoolVar(&opt.Overwrite, "overwrite", false, "")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return flagStatus(err)
	}
	cs, paths, err := changeSetArgs(positional)
	if err != nil {
		return fail(stdio.Err, fmt.Errorf("apply: %w", err))
	}
	opt.Paths = paths
	res, err := cs.Apply(opt)
	if res != nil {
		printApplied(stdio, cs, res)
	}
	if err != nil {
		return fail(stdio.Err, fmt.Errorf("apply %s: %w", cs.ID, err))
	}
	if len(res.Refused) > 0 || len(res.Conflicts) > 0 {
		fmt.Fprintf(stdio.Err, "jail: apply %s: nothing written: %d refused, %d in conflict (listed above); pass the flag named, or name the paths to apply\n",
			cs.ID, len(res.Refused), len(res.Conflicts))
		return exitRefused
	}
	return 0
}

// printApplied reports what apply wrote on stdout, git-status style, and what it refused,
// left out or imported on stderr.
func printApplied(stdio jail.Stdio, cs *workspace.ChangeSet, res *workspace.Applied) {
	for _, line := range workspace.RefusalLines(res.Refused) {
		fmt.Fprintf(stdio.Err, "jail: apply %s: %s\n", cs.ID, line)
	}
	for _, c := range res.Conflicts {
		fmt.Fprintf(stdio.Err, "jail: apply %s: %s\n", cs.ID, c)
	}
	for _, c := range res.Written {
		fmt.Fprintln(stdio.Out, workspace.StatusLine(c))
	}
	if res.Removed {
		fmt.Fprintf(stdio.Err, "jail: apply %s: every change is in %s; the change set is removed\n", cs.ID, cs.Manifest.Tree)
	}
}

// runDiscard is `jail discard [ID]`.
func runDiscard(args []string, stdio jail.Stdio) int {
	if helpAsked(args, stdio) {
		return 0
	}
	if len(args) > 1 {
		fmt.Fprintf(stdio.Err, "jail: discard: too many arguments; %s\n", changesUsage)
		return exitFailure
	}
	cs, err := discardTarget(args)
	if err != nil {
		return fail(stdio.Err, fmt.Errorf("discard: %w", err))
	}
	if err := cs.Discard(); err != nil {
		return fail(stdio.Err, err)
	}
	fmt.Fprintf(stdio.Err, "jail: discarded change set %s\n", cs.ID)
	return 0
}

// discardTarget is the change set `jail discard` names: a damaged one too, which only discard
// can remove.
func discardTarget(args []string) (*workspace.ChangeSet, error) {
	if len(args) == 1 {
		store, err := userStore()
		if err != nil {
			return nil, err
		}
		return store.OpenAny(args[0])
	}
	cs, _, err := changeSetArgs(nil)
	return cs, err
}

// finishWorkspace closes a run's change set and says where its changes wait.
func finishWorkspace(w io.Writer, run *workspace.Run, status *int, quiet bool) {
	n, err := run.Finish(status)
	if err != nil {
		fmt.Fprintf(w, "jail: %s\n", err)
		return
	}
	if n > 0 && !quiet {
		id := run.ChangeSet.ID
		fmt.Fprintf(w, "jail: %d changes wait in change set %s: jail diff %s | jail apply %s | jail discard %s\n", n, id, id, id, id)
	}
}
