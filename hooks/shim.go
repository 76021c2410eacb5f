package hooks

import (
	"errors"
	"path/filepath"
	"strings"
)

// The shell shim lets any tool that runs `$SHELL -c …` (or takes a shell path) run its commands
// under jail: point it at a jail-sh (or jail-bash) symlink to the jail binary, or call
// `jail shell`. The shim is a drop-in for the shell, so its argv is the shell's argv: it is
// handed to the real shell inside jail unchanged, and the shell itself keeps the meaning of
// -c CMD [ARG0 ARGS…], -e/-x/-o options, script files and interactive use.

// ShimShell reports whether argv0 (os.Args[0]) names the shell shim and which shell it stands in
// for: jail-sh → sh, jail-bash → bash. Only the base name counts, so a symlink anywhere works.
func ShimShell(argv0 string) (shell string, ok bool) {
	switch filepath.Base(argv0) {
	case "jail-sh":
		return "sh", true
	case "jail-bash":
		return "bash", true
	}
	return "", false
}

// ShimProfile is the profile the shim applies: $JAIL_PROFILE, else DefaultProfile. getenv is
// os.Getenv (a parameter so the CLI's environment handling stays in one place and tests need no
// global state).
func ShimProfile(getenv func(string) string) string {
	if p := getenv("JAIL_PROFILE"); p != "" {
		return p
	}
	return DefaultProfile
}

// ShellArgs maps the shim's arguments (os.Args[1:] of jail-sh, or what follows `jail shell`) to
// jail's: -p PROFILE -- sh ARGS…. The CLI only has to run jail with them.
func ShellArgs(args []string, profile string) ([]string, error) {
	return ShellArgsFor("sh", args, profile)
}

// ShellArgsFor is ShellArgs for a given inner shell (see ShimShell).
func ShellArgsFor(shell string, args []string, profile string) ([]string, error) {
	if err := checkShellArgs(args); err != nil {
		return nil, err
	}
	if profile == "" {
		profile = DefaultProfile
	}
	return append([]string{"-p", profile, "--", shell}, args...), nil
}

// errNoCommandString is the one usage error worth catching before a sandbox is built: the shell
// inside would report it too, but only after jail started, and less clearly.
var errNoCommandString = errors.New("-c: option requires an argument (the command string)")

// checkShellArgs walks the shell's options the way sh does (clusters like -ec, -o NAME, + forms,
// bash's --long options, "--" or "-" ending them) to check that -c has its command string.
func checkShellArgs(args []string) error {
	wantC := false
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" {
			i++
			break
		}
		if len(a) < 2 || (a[0] != '-' && a[0] != '+') {
			break
		}
		if strings.HasPrefix(a, "--") {
			if a == "--rcfile" || a == "--init-file" {
				i++ // bash: takes a file name
			}
			continue
		}
		for _, c := range a[1:] {
			switch c {
			case 'c':
				wantC = true
			case 'o', 'O':
				i++ // takes an option name
			}
		}
	}
	if wantC && i >= len(args) {
		return errNoCommandString
	}
	return nil
}
