package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/jail-sandbox/jail/hooks"
	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/profiles"
)

// exitFailure is jail's own failure (bad usage, bad profile, sandbox setup), as env(1), podman
// and docker use it; 126 and 127 come from the launcher's *jail.Error.
const exitFailure = 125

const defaultProfile = "agent"

const usage = `Usage: jail [OPTIONS] [--] COMMAND [ARG...]
       jail profile list | show NAME|FILE | check FILE...
       jail doctor [--json]
       jail hook claude-code|codex|gemini [-p PROFILE]
       jail hook install claude-code|codex|gemini [--profile PROFILE] [--scope user|project]
       jail hook check claude-code|codex|gemini [-v]
       jail shell [-p PROFILE] [-c COMMAND [ARG0 ARG...]]
                 (also as jail-sh[@PROFILE] / jail-bash[@PROFILE] through a symlink)
       jail create [OPTIONS] | exec ID -- COMMAND | ls | inspect ID | cp | rm ID... | prune | serve
                                             persistent sandboxes (jail create --help; docs/api.md)
       jail seccomp export [-p PROFILE] [-o FILE]
       jail changes | diff [ID|NAME] [PATH...] | apply [ID|NAME] [PATH...] | discard [ID|NAME]
       jail --version | --help

Runs COMMAND in a fresh sandbox built from a profile: its own user, mount, pid, ipc, uts and net
namespaces, a root holding only what the profile grants, Landlock rules, a seccomp filter, no
capabilities and no_new_privs.

Options:
  -p, --profile NAME|FILE   profile to apply (default: agent)
      --ro PATH             also grant PATH read-only        (repeatable)
      --rw PATH             also grant PATH read-write       (repeatable)
      --hide PATH           mask PATH, even under a grant    (repeatable)
      --tmpfs PATH          empty writable tmpfs at PATH     (repeatable)
      --net none|host|proxy network mode
      --allow-host PATTERN  reach PATTERN through jail's egress proxy (implies --net proxy;
                            example.com, *.example.com, HOST:PORT; repeatable)
      --allow-private       let allowed names resolve to loopback/private addresses
      --env NAME[=VALUE]    pass NAME through, or set it     (repeatable)
      --cwd DIR             working directory inside (default: the current one)
      --cache TOOL,...      keep go, npm, pip, cargo caches of this project between runs, in
                            jail's own directories (none: no caches; default: agent's four)
      --workspace MODE      bind (default): the working directory itself, writable;
                            overlay: writes wait in a change set (jail diff, jail apply)
      --timeout DURATION    kill the whole sandbox after DURATION (exit 124)
      --fallback landlock   without user namespaces, run with Landlock + seccomp alone
      --allow-weaker        run although some protections cannot hold (the fallback's;
                            a container's masked /proc): jail names each one
  -v, --verbose             log each setup step to stderr, timed from jail's start
  -q, --quiet               no notices but what weakens the sandbox, each in one line
                            (none for denied connections, the exit report, the hostname)
      --report FILE         write what happened as JSON to FILE at exit (layers, status, usage)
      --explain             after the command, explain each write or connect the sandbox refused,
                            and name what it wrote to private tmpfs mounts, gone with it
      --json-status-fd FD   stream bwrap-style JSON status lines (start, exit) on descriptor FD
      --dry-run             print the resolved plan (JSON) and exit 0

Exit status: the command's own; 128+N if it died of signal N; 124 on --timeout;
125 jail's own error; 126 command not executable; 127 command not found.
`

// Run is the whole CLI: it parses args (args[0] is the program name), does the work and returns
// the exit status. main only dispatches the sandbox's init first and exits with this.
func Run(args []string, stdio jail.Stdio) int {
	if shell, profile, ok := hooks.ShimShell(args[0]); ok {
		return runShell(filepath.Base(args[0]), shell, profile, args[1:], stdio)
	}
	if len(args) > 1 {
		switch args[1] {
		case "profile":
			return runProfile(args[2:], stdio)
		case "doctor":
			return runDoctor(args[2:], stdio)
		case "seccomp":
			return runSeccomp(args[2:], stdio)
		case "hook":
			return runHook(args[2:], stdio)
		case "shell":
			return runShellCommand(args[2:], stdio)
		case "changes":
			return runChanges(args[2:], stdio)
		case "diff":
			return runDiff(args[2:], stdio)
		case "apply":
			return runApply(args[2:], stdio)
		case "discard":
			return runDiscard(args[2:], stdio)
		case "create":
			return runCreate(args[2:], stdio)
		case "exec":
			return runExec(args[2:], stdio)
		case "ls":
			return runLs(args[2:], stdio)
		case "inspect":
			return runInspect(args[2:], stdio)
		case "rm":
			return runRm(args[2:], stdio)
		case "prune":
			return runPrune(args[2:], stdio)
		case "cp":
			return runCp(args[2:], stdio)
		case "serve":
			return runServe(args[2:], stdio)
		}
	}
	return runCommand(args[1:], stdio)
}

// fail prints jail's one-line error (a line each for a profile's several) and returns the exit
// status that goes with it.
func fail(w io.Writer, err error) int {
	var list profiles.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Fprintf(w, "jail: %s\n", e)
		}
		return exitFailure
	}
	fmt.Fprintf(w, "jail: %s\n", err)
	var je *jail.Error
	if errors.As(err, &je) && je.Exit != 0 {
		return je.Exit
	}
	return exitFailure
}

// loadHost reads what resolution needs from this process: home, working directory, environment.
func loadHost() (profiles.Host, error) {
	host, err := profiles.HostFromOS()
	if err != nil {
		return host, fmt.Errorf("read host environment: %w", err)
	}
	return host, nil
}
