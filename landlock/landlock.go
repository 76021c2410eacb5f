// Package landlock applies jail's filesystem, TCP and IPC-scope grants as a Landlock domain on
// the calling OS thread. It wraps github.com/landlock-lsm/go-landlock: that library builds the
// ruleset and downgrades it to the running kernel's ABI (best effort); this package only says
// which rights a grant means, enforces the result on one thread, and reports what the kernel
// could not give.
package landlock

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"

	golandlock "github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Modes of Config.Mode.
const (
	ModeRequired   = "required"    // fail when a feature jail uses is missing
	ModeBestEffort = "best-effort" // apply what the kernel has, report the rest
	ModeOff        = "off"         // apply nothing
)

// Config is the Landlock part of a sandbox plan. Paths are as the restricted thread sees them.
type Config struct {
	Mode  string   // ModeRequired, ModeBestEffort or ModeOff
	Read  []string // read and execute beneath each path
	Write []string // every filesystem right the ABI offers beneath each path
	// Truncate are Read paths that also get the truncate right, for a caller whose mounts refuse
	// truncate there themselves: Landlock asks for truncate at every open, so a grant without it
	// does not end the kernel's check of an open beneath it, which walks on to the root.
	Truncate []string
	// List are directories whose entries may be listed, and nothing more: how a path hidden
	// beneath a grant is carved out of it when there is no mount namespace to mask it (its
	// parents get List, its siblings the grant).
	List []string
	// TCPConnect and TCPBind are the only TCP ports allowed when RestrictTCP is set; with
	// RestrictTCP and both empty, every TCP connect and bind is denied.
	TCPConnect, TCPBind []uint16
	RestrictTCP         bool
	// Scope confines abstract unix sockets and signals to the Landlock domain (ABI ≥ 6).
	Scope bool
	// Exec are files that may be executed (which reads them), and nothing more: jail's own
	// binary for a persistent sandbox's spawner, which is not beneath any grant.
	Exec []string
}

// Report says what Restrict applied.
type Report struct {
	ABI     int      // the kernel's Landlock ABI version (0: none)
	Missing []string // features the config asked for that the kernel lacks, e.g. "tcp (ABI 4, Linux 6.7)"
}

// Rights a grant means. readRights are what a read grant gives; fileRights are the only rights
// the kernel accepts on a rule for a non-directory.
const (
	readRights golandlock.AccessFSSet = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	fileRights golandlock.AccessFSSet = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile |
		ll.AccessFSTruncate | ll.AccessFSIoctlDev
	tcpRights golandlock.AccessNetSet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	scopes    golandlock.ScopedSet    = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
)

// ABI returns the running kernel's Landlock ABI version, 0 when Landlock is unavailable. Like
// go-landlock (whose detection is internal), it counts ABI 6 as 5 when the kernel lacks the
// signal-scoping fix (erratum 2), since go-landlock's downgrade will then not scope.
func ABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	if v >= 6 {
		errata, err := ll.LandlockGetErrata()
		if err != nil || errata&0x2 == 0 {
			v = 5
		}
	}
	return v
}

// Restrict enforces c on the calling OS thread only, and on the processes it forks afterwards.
// The caller must hold runtime.LockOSThread and never unlock it (the thread is restricted for
// good, so Go must let it die rather than reuse it). Restrict sets no_new_privs on the thread,
// as Landlock requires it of unprivileged callers.
//
// In ModeRequired a missing feature is an error naming it, and nothing is applied. In
// ModeBestEffort what the kernel has is applied and the rest is listed in Report.Missing.
// Errors do not start with "landlock": the caller names the operation ("apply landlock").
func Restrict(c Config) (Report, error) {
	return restrict(c, ABI())
}

// restrict is Restrict for a kernel reporting Landlock ABI abi (tests pass a lower one).
func restrict(c Config, abi int) (Report, error) {
	rep := Report{ABI: abi}
	switch c.Mode {
	case ModeOff:
		return rep, nil
	case ModeRequired, ModeBestEffort:
	default:
		return rep, fmt.Errorf("unknown mode %q (want %s, %s or %s)", c.Mode, ModeRequired, ModeBestEffort, ModeOff)
	}
	rep.Missing = missing(c, abi)
	if c.Mode == ModeRequired && len(rep.Missing) > 0 {
		return rep, fmt.Errorf("mode \"required\", but this kernel has Landlock ABI %d, without %s", abi, strings.Join(rep.Missing, ", "))
	}
	rules, err := rules(c, abi)
	if err != nil {
		return rep, err
	}
	cfg := golandlock.Config{HandledAccessFS: allFSRights(abi)}
	if c.RestrictTCP {
		cfg.HandledAccessNet = tcpRights
	}
	if c.Scope {
		cfg.Scoped = scopes
	}
	// Denials after execve are what a user wants to see in the audit log (ABI ≥ 7).
	cfg = cfg.EnableLoggingForSubprocesses().BestEffort()
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return rep, fmt.Errorf("build ruleset: %w", err)
	}
	if fd < 0 {
		return rep, nil // no Landlock in this kernel; Missing says so
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return rep, fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		if errors.Is(err, syscall.E2BIG) {
			return rep, fmt.Errorf("landlock_restrict_self: too many stacked rulesets: %w", err)
		}
		return rep, fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return rep, nil
}

// allFSRights is every filesystem right go-landlock knows, minus refer below ABI 2: go-landlock
// drops the whole ruleset in best-effort mode when a rule asks for refer on a kernel without it,
// and refer is implicitly denied there anyway.
func allFSRights(abi int) golandlock.AccessFSSet {
	all := golandlock.V11.HandledAccessFS
	if abi < 2 {
		all &^= ll.AccessFSRefer
	}
	return all
}

// rules turns the grants into go-landlock rules. A grant on a non-directory keeps only the
// rights the kernel allows on files.
func rules(c Config, abi int) ([]golandlock.Rule, error) {
	var rs []golandlock.Rule
	add := func(paths []string, rights golandlock.AccessFSSet) error {
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil {
				return fmt.Errorf("grant %s: %w", p, err)
			}
			r := rights
			if !fi.IsDir() {
				r &= fileRights
			}
			rs = append(rs, golandlock.PathAccess(r, p))
		}
		return nil
	}
	if err := add(slices.DeleteFunc(slices.Clone(c.Read), func(p string) bool { return slices.Contains(c.Truncate, p) }), readRights); err != nil {
		return nil, err
	}
	if err := add(c.Truncate, readRights|ll.AccessFSTruncate); err != nil {
		return nil, err
	}
	if err := add(c.List, ll.AccessFSReadDir); err != nil {
		return nil, err
	}
	if err := add(c.Write, allFSRights(abi)); err != nil {
		return nil, err
	}
	if err := add(c.Exec, ll.AccessFSExecute|ll.AccessFSReadFile); err != nil {
		return nil, err
	}
	if c.RestrictTCP {
		for _, p := range c.TCPConnect {
			rs = append(rs, golandlock.ConnectTCP(p))
		}
		for _, p := range c.TCPBind {
			rs = append(rs, golandlock.BindTCP(p))
		}
	}
	return rs, nil
}
