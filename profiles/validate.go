package profiles

import (
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/proxy"
	"github.com/jail-sandbox/jail/seccomp"
)

// check is one small validation of an expanded profile (runc's validator style): it returns
// what it finds wrong (an *Error, or an ErrorList of several) and reports
// questionable-but-harmless settings through warn.
type check func(p *Profile, warn func(*Error)) error

// checks run in this order before the filesystem is planned; the planner checks paths.
var checks = []check{
	checkWorkspace,
	checkNetwork,
	checkLandlock,
	checkSandbox,
	checkLimits,
	checkSyscalls,
	checkEnv,
	checkHostname,
	checkGit,
	checkCache,
}

// validate runs every check and returns every error, and the warnings.
func validate(p *Profile) (warnings []*Error, err error) {
	warn := func(e *Error) { warnings = append(warnings, e) }
	var errs ErrorList
	for _, c := range checks {
		errs.add(c(p, warn))
	}
	return warnings, errs.err()
}

// oneOf checks that a string key holds one of the allowed values ("" is the default).
func oneOf(p *Profile, key, value string, allowed ...string) error {
	if value == "" || slices.Contains(allowed, value) {
		return nil
	}
	return p.errorAt(key, value, "%q is not valid (want %s)", value, strings.Join(allowed, " or "))
}

func checkWorkspace(p *Profile, _ func(*Error)) error {
	return oneOf(p, "filesystem.workspace", p.Filesystem.Workspace, "bind", "overlay")
}

func checkNetwork(p *Profile, warn func(*Error)) error {
	var errs ErrorList
	errs.add(oneOf(p, "network.mode", p.Network.Mode, "none", "host", "proxy"))
	for _, l := range []stringList{{"network.allow", &p.Network.Allow}, {"network.deny", &p.Network.Deny}} {
		for _, pattern := range *l.list {
			if err := proxy.ValidatePattern(pattern); err != nil {
				errs.add(p.errorAt(l.key, pattern, "%q: %w", pattern, err))
			}
		}
		if len(*l.list) > 0 && p.Network.Mode != "proxy" {
			warn(p.errorAt(l.key, "", "has no effect unless network.mode is \"proxy\""))
		}
	}
	if p.Network.AllowPrivate != nil && p.Network.Mode != "proxy" {
		warn(p.errorAt("network.allow_private", "", "has no effect unless network.mode is \"proxy\""))
	}
	for _, l := range []struct {
		key string
		n   *uint64
		max uint64
	}{{"network.max_connections", p.Network.MaxConnections, math.MaxInt32}, {"network.max_buffer", p.Network.MaxBuffer, math.MaxInt64}} {
		switch {
		case l.n == nil:
		case *l.n == 0 || *l.n > l.max:
			return p.errorAt(l.key, "", "%d is not valid (want a positive number up to %d)", *l.n, l.max)
		case p.Network.Mode != "proxy":
			warn(p.errorAt(l.key, "", "has no effect unless network.mode is \"proxy\""))
		}
	}
	if p.Network.Mode != "host" {
		for _, l := range p.portLists() {
			if len(*l.val) > 0 {
				warn(p.errorAt(l.key, "", "has no effect unless network.mode is \"host\""))
			}
		}
	}
	return errs.err()
}

func checkLandlock(p *Profile, _ func(*Error)) error {
	var errs ErrorList
	errs.add(oneOf(p, "landlock.mode", p.Landlock.Mode, "required", "best-effort", "off"))
	for _, l := range []stringList{{"landlock.read", &p.Landlock.Read}, {"landlock.write", &p.Landlock.Write}} {
		for _, raw := range *l.list {
			if _, err := p.parseEntry(l.key, raw); err != nil {
				errs.add(err)
			}
		}
	}
	return errs.err()
}

func checkSandbox(p *Profile, warn func(*Error)) error {
	return oneOf(p, "sandbox.fallback", p.Sandbox.Fallback, "landlock")
}

// minTmpfs is the least limits.tmpfs: /dev alone holds a few dozen entries.
const minTmpfs = 1 << 20

func checkLimits(p *Profile, _ func(*Error)) error {
	if t := p.Limits.Tmpfs; t != nil && *t < minTmpfs {
		return p.errorAt("limits.tmpfs", "", "%d bytes is too small: the private tmpfs mounts need at least %d (1 MiB)", *t, minTmpfs)
	}
	if p.Limits.Timeout == "" {
		return nil
	}
	d, err := time.ParseDuration(p.Limits.Timeout)
	if err != nil || d <= 0 {
		return p.errorAt("limits.timeout", p.Limits.Timeout, "%q is not a positive duration (e.g. \"90s\", \"10m\", \"1h30m\")", p.Limits.Timeout)
	}
	return nil
}

func checkSyscalls(p *Profile, _ func(*Error)) error {
	s := p.Syscalls
	var errs ErrorList
	errs.add(oneOf(p, "syscalls.default", s.Default, "allow", "deny", "off"))
	if s.Errno != "" && !knownErrno(s.Errno) {
		errs.add(p.errorAt("syscalls.errno", s.Errno, "%q is not an errno name (e.g. \"EPERM\", \"ENOSYS\")", s.Errno))
	}
	for _, list := range []struct {
		key   string
		names []string
	}{{"syscalls.deny", s.Deny}, {"syscalls.allow", s.Allow}} {
		for _, name := range list.names {
			if seccomp.Known(name) {
				continue
			}
			if hint := seccomp.Suggest(name); hint != "" {
				errs.add(p.errorAt(list.key, name, "unknown syscall %q (did you mean %q?)", name, hint))
			} else {
				errs.add(p.errorAt(list.key, name, "unknown syscall %q", name))
			}
		}
	}
	for _, name := range s.Allow {
		if slices.Contains(s.Deny, name) {
			errs.add(p.errorAt("syscalls.allow", name, "%q is both allowed and denied; remove one", name))
		}
	}
	return errs.err()
}

// knownErrno reports whether name is an errno name the seccomp policy accepts.
func knownErrno(name string) bool {
	_, ok := seccomp.ErrnoByName(name)
	return ok
}

// checkEnv accepts NAME, a glob over names (LC_*), and NAME=VALUE.
func checkEnv(p *Profile, _ func(*Error)) error {
	var errs ErrorList
	for _, v := range p.Process.Env {
		name, _, set := strings.Cut(v, "=")
		if set && isName(name) || !set && isNamePattern(name) {
			continue
		}
		errs.add(p.errorAt("process.env", v, "%q is not NAME, a glob like LC_*, or NAME=VALUE", v))
	}
	return errs.err()
}

// isNamePattern reports whether s is a variable name or a valid glob over names (LC_*).
func isNamePattern(s string) bool {
	if _, err := path.Match(s, ""); err != nil || s == "" {
		return false
	}
	for i := range len(s) {
		if !isNameByte(s[i], 1) && !strings.ContainsRune("*?[]^!-", rune(s[i])) {
			return false
		}
	}
	return true
}

func checkHostname(p *Profile, _ func(*Error)) error {
	h := p.Process.Hostname
	if len(h) > 64 || strings.ContainsAny(h, "/\x00 \t\n") {
		return p.errorAt("process.hostname", h, "%q is not a hostname (at most 64 characters, no spaces or /)", h)
	}
	return nil
}

func checkGit(p *Profile, _ func(*Error)) error {
	return oneOf(p, "git.mode", p.Git.Mode, "read-only", "commit", "off")
}
