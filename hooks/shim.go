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
//
// The profile comes from the link's own name, never from the environment: whoever runs the shim
// (make, a harness) passes its environment on, and that environment is what the project's files
// set (a Makefile's `export`), so a variable would let a file the sandbox wrote pick the next
// sandbox's profile. The link is made by the user, outside any sandbox.

// ShimEnvVar is the variable earlier releases read the shim's profile from. It is refused now,
// so that a setup relying on it fails loudly instead of running under another profile.
const ShimEnvVar = "JAIL_PROFILE"

// ShimShell reports whether argv0 (os.Args[0]) names the shell shim, which shell it stands in
// for and under which profile it runs it:
//
//	jail-sh, jail-bash                 sh or bash, DefaultProfile
//	jail-sh@PROFILE, jail-bash@PROFILE sh or bash, PROFILE
//
// Only names count (a symlink anywhere works); a profile named there is a profile name (built
// in, or ~/.config/jail/NAME.toml), since a file path cannot be part of a file name.
func ShimShell(argv0 string) (shell, profile string, ok bool) {
	name, profile, named := strings.Cut(filepath.Base(argv0), "@")
	switch name {
	case "jail-sh":
		shell = "sh"
	case "jail-bash":
		shell = "bash"
	default:
		return "", "", false
	}
	if !named {
		return shell, DefaultProfile, true
	}
	if profile == "" {
		return "", "", false
	}
	return shell, profile, true
}

// errShimEnv refuses a shim run whose environment names a profile: see ShimEnvVar.
var errShimEnv = errors.New("$" + ShimEnvVar + " is not read (a Makefile or script could set it): " +
	"name the profile in the link instead, e.g. ln -s $(command -v jail) ~/.local/bin/jail-sh@readonly")

// CheckShimEnv returns an error when getenv (os.Getenv) has ShimEnvVar set.
func CheckShimEnv(getenv func(string) string) error {
	if getenv(ShimEnvVar) != "" {
		return errShimEnv
	}
	return nil
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
