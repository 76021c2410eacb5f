package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/jail/client"
)

const execUsage = `Usage: jail exec [-i] [-t] [--cwd DIR] [--env NAME[=VALUE]] [--timeout DURATION] ID|NAME -- COMMAND [ARG...]

Runs COMMAND in the persistent sandbox ID (or NAME) with every restriction of the sandbox, its
stdin, stdout and stderr yours. -i passes your stdin (otherwise /dev/null); -t gives it a
pseudo-terminal of the sandbox's own, relayed to yours. --env sets NAME=VALUE, or passes your
NAME; --timeout kills it after DURATION (exit 124; default: the sandbox's, none if unset, 0:
none). Processes it leaves running keep running.

Exit status: the command's own; 128+N if it died of signal N; 124 on --timeout; 125 jail's own
error; 126 command not executable; 127 command not found.
`

// forwarded are the signals `jail exec` passes on to the command, as a run does.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// runExec is `jail exec`: the command gets this process's own stdio as descriptors (client.Start
// passes them to the sandbox's spawner), so nothing relays its output; with -t the spawner sends
// back the master of the terminal it made, which this process relays. Its common form never gets
// here: the constructor sends the same request before Go's runtime (spawn/fast.c), and leaves
// the rest, and every failure to start, to this.
func runExec(args []string, stdio jail.Stdio) int {
	fs := flag.NewFlagSet("jail exec", flag.ContinueOnError)
	var interactive, terminal bool
	var cwd, timeout string
	var env stringList
	fs.BoolVar(&interactive, "i", false, "")
	fs.BoolVar(&terminal, "t", false, "")
	fs.StringVar(&cwd, "cwd", "", "")
	fs.Var(&env, "env", "")
	fs.StringVar(&timeout, "timeout", "", "")
	if status, done := parseSubcommand(fs, "exec", execUsage, args, stdio); done {
		return status
	}
	rest := fs.Args()
	if len(rest) > 1 && rest[1] == "--" {
		rest = append(rest[:1:1], rest[2:]...)
	}
	if len(rest) < 2 {
		fmt.Fprint(stdio.Err, "jail: exec: give a sandbox and a command: jail exec ID -- COMMAND [ARG...]\n")
		return exitFailure
	}
	cmd := client.Command{Argv: rest[1:], Cwd: cwd, Foreground: true, Stdout: stdio.Out, Stderr: stdio.Err}
	var err error
	if cmd.Env, err = execEnv(env); err != nil {
		return fail(stdio.Err, err)
	}
	if timeout != "" {
		d, err := api.ParseDuration(timeout)
		if err != nil {
			return fail(stdio.Err, fmt.Errorf("exec: --timeout: %w", err))
		}
		cmd.Timeout = d
		if d == 0 {
			cmd.Timeout = -1
		}
	}
	if interactive {
		cmd.Stdin = stdio.In
	}
	if terminal {
		cmd.TTY, cmd.Master = terminalSize(stdio), true
		cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	}
	return execute(rest[0], cmd, interactive, stdio)
}

// execute starts cmd, passes signals on, relays a terminal, and returns the exit status.
func execute(id string, cmd client.Command, interactive bool, stdio jail.Stdio) int {
	// Caught from the start, in the background: Go's runtime takes half a millisecond to enable
	// them, and a signal before then ends this process, which kills the command.
	signals := make(chan os.Signal, 8)
	go signal.Notify(signals, append(forwarded, syscall.SIGWINCH)...)
	r, err := client.New().Start(id, cmd)
	if err != nil {
		e := api.AsError(err)
		fmt.Fprintln(stdio.Err, e.Message)
		if e.Exit != 0 {
			return e.Exit
		}
		return exitFailure
	}
	defer r.Close()
	drain, resize := func() {}, func() {}
	if r.Master != nil {
		drain, resize = r.Relay(stdio, interactive)
	}
	go func() {
		for sig := range signals {
			if sig == syscall.SIGWINCH {
				resize()
				continue
			}
			r.Signal(sig.(syscall.Signal), false)
		}
	}()
	exit, err := r.Wait()
	drain()
	if err != nil {
		return fail(stdio.Err, err)
	}
	if exit.TimedOut {
		fmt.Fprintf(stdio.Err, "jail: timeout: killed the command after %s\n", r.Timeout)
	}
	return exit.ExitCode
}

// execEnv turns --env NAME=VALUE (set) and --env NAME (this process's NAME, when set) into the
// command's additions to the sandbox's environment.
func execEnv(list []string) (map[string]string, error) {
	env := map[string]string{}
	for _, e := range list {
		k, v, set := strings.Cut(e, "=")
		if k == "" {
			return nil, fmt.Errorf("exec: --env %q: a variable needs a name", e)
		}
		if !set {
			if v, set = os.LookupEnv(k); !set {
				continue
			}
		}
		env[k] = v
	}
	return env, nil
}

// terminalSize is the caller's terminal's size, or 80x24.
func terminalSize(stdio jail.Stdio) *api.TTYSize {
	for _, f := range []*os.File{stdio.In, stdio.Out, stdio.Err} {
		if f == nil {
			continue
		}
		if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
			return &api.TTYSize{Cols: ws.Col, Rows: ws.Row}
		}
	}
	return &api.TTYSize{Cols: 80, Rows: 24}
}
