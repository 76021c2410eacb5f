package explain

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/jail-sandbox/jail/jail/internal/restrict"
	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/plan"
)

// Denial is one call of the command that --explain predicts the sandbox refuses: init judges it
// from the Spec while the call waits (watch.go), the host adds Message (message.go).
type Denial struct {
	// Kind is "write" (a call that creates, changes, renames or removes Path) or "connect".
	Kind    string `json:"kind"`
	Path    string `json:"path,omitempty"`    // as the sandbox sees it, symlinks of its parents followed
	Address string `json:"address,omitempty"` // HOST:PORT of a connect
	Syscall string `json:"syscall"`
	// Rule says which part of the plan refuses it: "outside-grants" (no writable grant covers
	// Path), "read-only" (a read-only grant does), "protected", "hidden", "mountpoint" (Path is
	// where something is mounted: it cannot be renamed or removed), "no-network", "proxy-only"
	// (only the egress proxy's ports are reachable), "tcp-port" (Landlock allows other ports),
	// "not-in-sandbox" (Path's directory, which the host has, is not there: an empty tmpfs
	// replaces what holds it), "git-metadata" (Path is in the repository's git directory,
	// which [git] keeps read-only).
	Rule string `json:"rule"`
	// Under is the grant, protection or mask that decides: its path.
	Under string `json:"under,omitempty"`
	// Exists says Path existed when the call was made (the flag to suggest names it, or its
	// directory).
	Exists  bool   `json:"exists,omitempty"`
	Message string `json:"message,omitempty"`
}

// key identifies a distinct denial.
func (d Denial) key() string { return d.Kind + " " + d.Path + d.Address }

// writeTarget is the path a write call names, as the sandbox sees it (symlinks of its parents
// followed), and what the kernel will find there.
type writeTarget struct {
	path       string
	exists     bool
	dirMissing bool // its directory does not exist (in the sandbox)
	removes    bool // the call removes or renames path itself, which a mountpoint refuses
}

// writeVerdict judges a write to t against the plan. It returns the rule that refuses it and
// the path of the mount or grant that decides, or "" when the sandbox lets the write through
// (or jail cannot tell: /proc and /dev).
func writeVerdict(spec *plan.Spec, t writeTarget) (rule, under string) {
	path := t.path
	var cover *plan.Mount
	for i := range spec.Mounts {
		m := &spec.Mounts[i]
		if covers(m, path) {
			cover = m // mounts are in order: the last covering one is on top
		}
	}
	if cover == nil {
		return "outside-grants", ""
	}
	switch cover.Kind {
	case plan.MountProc, plan.MountDev:
		return "", "" // devices, terminals and /proc/self/fd links: not judged
	case plan.MountROBind, plan.MountProtect:
		if g := spec.Git; g != nil && g.Mode == "read-only" && within(path, g.CommonDir) {
			return "git-metadata", g.CommonDir
		}
	}
	switch cover.Kind {
	case plan.MountROBind:
		return "read-only", cover.Target
	case plan.MountProtect:
		return "protected", cover.Target
	case plan.MountHideDir, plan.MountHideFile:
		return "hidden", cover.Target
	}
	if t.removes && cover.Target == path {
		return "mountpoint", path
	}
	if spec.Landlock.Mode != landlock.ModeOff && !slices.ContainsFunc(spec.Landlock.Write, func(w string) bool { return within(path, w) }) {
		return "outside-grants", ""
	}
	if t.dirMissing && cover.Kind == plan.MountTmpfs {
		// ENOENT, where the host may well have the directory: the tmpfs hides it. The host
		// keeps this one only if it does (jail's explain_report.go).
		return "not-in-sandbox", cover.Target
	}
	return "", ""
}

// covers reports whether m is a mount (not a symlink or directory op) whose tree holds path.
func covers(m *plan.Mount, path string) bool {
	switch m.Kind {
	case plan.MountSymlink, plan.MountDir:
		return false
	case plan.MountHideFile:
		return m.Target == path
	case plan.MountROBind, plan.MountBind, plan.MountProtect:
		if !m.IsDir {
			return m.Target == path
		}
	}
	return within(path, m.Target)
}

// within reports whether path is dir or beneath it.
func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}

// unjudged reports whether path lies where jail does not predict writes: /proc and /dev hold
// terminals, devices and magic links, which the mounts say nothing about.
func unjudged(path string) bool {
	return within(path, "/proc") || within(path, "/dev")
}

// connectVerdict judges a connect to addr:port. tcp says whether the socket is a TCP one; it is
// asked only where that matters (Landlock's TCP rules on the host's network).
func connectVerdict(spec *plan.Spec, addr netip.Addr, port uint16, tcp func() bool) string {
	net := spec.Network
	switch net.Mode {
	case "none", "proxy":
		if addr.IsLoopback() {
			return "" // the sandbox's own loopback: its own business
		}
		if net.Mode == "proxy" {
			return "proxy-only"
		}
		return "no-network"
	case "host":
		if restrict.RestrictsTCP(spec) && !slices.Contains(net.TCPConnect, port) && tcp() {
			return "tcp-port"
		}
	}
	return ""
}

// writableGrants lists the plan's writable binds and tmpfs, apart (for the message), without
// the self-binds beneath a grant that only pin protected paths in place.
func writableGrants(spec *plan.Spec) (binds, tmpfs []string) {
	for _, m := range spec.Mounts {
		switch m.Kind {
		case plan.MountBind, plan.MountOverlay:
			if !slices.ContainsFunc(binds, func(b string) bool { return within(m.Target, b) }) {
				binds = append(binds, m.Target)
			}
		case plan.MountTmpfs:
			tmpfs = append(tmpfs, m.Target)
		}
	}
	return binds, tmpfs
}
