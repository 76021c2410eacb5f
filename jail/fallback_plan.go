package jail

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/plan"
)

// fallbackPlan is how a Spec runs without namespaces: the Landlock rules that stand in for the
// mount view, and an honest account of the difference. Lost are protections the plan relies on
// that cannot hold; a run with any refuses to start unless the user allows a weaker sandbox.
// Carried are protections kept another way, and what works differently because of it.
type fallbackPlan struct {
	Landlock landlock.Config
	// PrivateTmp is the sandbox path of a tmpfs (/tmp) replaced by a private host directory
	// that TMPDIR points to; "" when the plan has none.
	PrivateTmp string
	// DenySyscalls are added to the seccomp deny list: System V IPC and POSIX message queues
	// (which only an IPC namespace would separate from the host) and, for network "none",
	// socket(2) itself (which only an empty network namespace would make harmless).
	DenySyscalls []string
	Lost         []string
	Carried      []string
}

// fallbackDevices are the /dev nodes the sandbox's minimal /dev holds, granted on the host's /dev.
var fallbackDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"}

// ipcSyscalls are the System V IPC and POSIX message-queue calls (POSIX shared memory lives in
// /dev/shm, which the fallback does not grant).
var ipcSyscalls = []string{
	"shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semctl",
	"msgget", "msgsnd", "msgrcv", "msgctl",
	"mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
}

// planFallback works out the fallback for spec on a kernel with Landlock ABI abi. The Landlock
// grants are the Spec's, as the mounts mirror them, except what only a mount namespace could
// give: tmpfs mounts, the minimal /dev and the empty home directory. Paths masked beneath a grant
// (hides, tmpfs) are carved out of it: the grant moves to their siblings. The Spec's List is not
// used: in a new root it lists only grants, on the host it would list every directory.
func planFallback(spec *plan.Spec, abi int) (*fallbackPlan, error) {
	if m, ok := spec.WorkspaceOverlay(); ok {
		return nil, fmt.Errorf("the overlay workspace %s needs a mount namespace: without one the command would write the tree itself, and jail does not fall back to that", m.Target)
	}
	p := &fallbackPlan{Landlock: landlock.Config{Mode: spec.Landlock.Mode, Scope: true}}
	m := p.readMounts(spec)
	if err := p.carveGrants(spec, m); err != nil {
		return nil, err
	}
	p.Lost = append(p.Lost, namespaceLosses(spec, abi)...)
	p.standIns(spec)
	return p, nil
}

// fallbackMounts is what the mount list means without a mount namespace.
type fallbackMounts struct {
	masks   []string        // targets whose host content the sandbox must not see
	hides   map[string]bool // the masks that are hides
	virtual map[string]bool // targets that exist only in the sandbox's own mounts
}

// readMounts sorts the mount list into masks and sandbox-only targets, recording what cannot
// hold (protects) and what stands in for a tmpfs.
func (p *fallbackPlan) readMounts(spec *plan.Spec) fallbackMounts {
	fm := fallbackMounts{hides: map[string]bool{}, virtual: map[string]bool{}}
	for _, m := range spec.Mounts {
		switch m.Kind {
		case plan.MountTmpfs, plan.MountDev:
			fm.virtual[m.Target] = true
			fm.masks = append(fm.masks, m.Target)
		case plan.MountDir:
			fm.virtual[m.Target] = true
		case plan.MountHideDir, plan.MountHideFile:
			fm.masks = append(fm.masks, m.Target)
			fm.hides[m.Target] = true
		case plan.MountProtect:
			p.Lost = append(p.Lost, fmt.Sprintf("protect %s: stays writable, since Landlock cannot take rights away beneath the write grant around it", m.Target))
		case plan.MountOverlay:
			p.Lost = append(p.Lost, fmt.Sprintf("git commit mode's overlay on %s: there is no overlay without a mount namespace; the git directory is what the grants around it make it", m.Target))
		}
	}
	for _, m := range spec.Mounts {
		if m.Kind == plan.MountBind || m.Kind == plan.MountROBind {
			delete(fm.virtual, m.Target) // a bind over a tmpfs (say, the working directory at ~) is real
		}
		if m.Kind == plan.MountROBind && beneathWritable(spec, m.Target) {
			p.Lost = append(p.Lost, fmt.Sprintf("read-only %s: stays writable, since Landlock cannot take rights away beneath the write grant around it", m.Target))
		}
	}
	for _, m := range spec.Mounts {
		switch {
		case m.Kind != plan.MountTmpfs || !fm.virtual[m.Target]:
		case isTmp(m.Target) && p.PrivateTmp == "":
			p.PrivateTmp = m.Target
			p.Carried = append(p.Carried, fmt.Sprintf("private %s: TMPDIR points to a fresh private directory instead; %s itself is not accessible", m.Target, m.Target))
		default:
			p.Carried = append(p.Carried, fmt.Sprintf("tmpfs %s: no private tmpfs without a mount namespace; %s is not accessible", m.Target, m.Target))
		}
	}
	return fm
}

// beneathWritable reports whether target lies strictly beneath a writable bind.
func beneathWritable(spec *plan.Spec, target string) bool {
	return slices.ContainsFunc(spec.Mounts, func(m plan.Mount) bool {
		return m.Kind == plan.MountBind && m.Target != target && (m.Target == "/" || strings.HasPrefix(target, m.Target+"/"))
	})
}

// carveGrants sets the Landlock read and write grants: the Spec's host paths, the minimal
// /dev's nodes, with every mask beneath a grant carved out of it.
func (p *fallbackPlan) carveGrants(spec *plan.Spec, fm fallbackMounts) error {
	real := func(paths []string) []string {
		return slices.DeleteFunc(slices.Clone(paths), func(s string) bool { return fm.virtual[s] })
	}
	read, write := real(spec.Landlock.Read), real(spec.Landlock.Write)
	if slices.ContainsFunc(spec.Mounts, func(m plan.Mount) bool { return m.Kind == plan.MountDev }) {
		write = append(write, existing(fallbackDevices)...)
	}
	ll := &p.Landlock
	var err error
	var carved []string
	if ll.Read, carved, err = carve(read, fm.masks, fm.hides, ll); err != nil {
		return err
	}
	if ll.Write, carved, err = carveMore(write, fm.masks, fm.hides, ll, carved); err != nil {
		return err
	}
	for _, m := range carved {
		if fm.hides[m] { // tmpfs and /dev have their own notes
			p.Carried = append(p.Carried, fmt.Sprintf("hide %s: carried by granting its siblings instead (names stay listable)", m))
		}
	}
	if blocked := createBlocked(ll.List, write); len(blocked) > 0 {
		p.Carried = append(p.Carried, "files cannot be created or removed directly in "+strings.Join(blocked, ", ")+" (a hidden path's parent in a write grant)")
	}
	return nil
}

// standIns puts seccomp and Landlock rules in place of the ipc and net namespaces.
func (p *fallbackPlan) standIns(spec *plan.Spec) {
	if spec.Namespaces.IPC {
		p.DenySyscalls = append(p.DenySyscalls, ipcSyscalls...)
		p.Carried = append(p.Carried, "ipc namespace: seccomp denies System V IPC and POSIX message queues")
	}
	if spec.Namespaces.UTS && spec.Hostname != "" {
		p.Carried = append(p.Carried, fmt.Sprintf("uts namespace: the command sees the host's name, not %q (it cannot change it)", spec.Hostname))
	}
	net, ll := spec.Network, &p.Landlock
	switch {
	case net.Mode != "host":
		ll.RestrictTCP = true
		p.DenySyscalls = append(p.DenySyscalls, "socket")
		p.Carried = append(p.Carried, "network none: seccomp denies socket(2) altogether (socketpair works; there is no loopback), Landlock denies every TCP connect and bind")
	case len(net.TCPConnect) > 0 || len(net.TCPBind) > 0:
		ll.RestrictTCP = true
		ll.TCPConnect, ll.TCPBind = net.TCPConnect, net.TCPBind
	}
}

// namespaceLosses are what no Landlock rule or seccomp filter can replace on a kernel with
// Landlock ABI abi.
func namespaceLosses(spec *plan.Spec, abi int) []string {
	var lost []string
	switch {
	case spec.Landlock.Mode == landlock.ModeOff:
		lost = append(lost, `filesystem isolation: [landlock] mode = "off" leaves the whole host filesystem open`)
	case abi < 1:
		lost = append(lost, "filesystem isolation: this kernel has no Landlock")
	}
	if spec.Namespaces.PID {
		lost = append(lost, "pid isolation: host processes stay visible in /proc; processes the command moves to a new session outlive it and --timeout (Landlock still blocks ptrace of host processes)")
	}
	if abi < 6 {
		lost = append(lost, fmt.Sprintf("signals to host processes, jail itself among them: scoping them needs Landlock ABI 6, this kernel has %d", abi))
	}
	host := spec.Network.Mode == "host"
	if host && abi < 6 {
		lost = append(lost, fmt.Sprintf("abstract unix sockets (X11, D-Bus) of the host stay reachable: scoping them needs Landlock ABI 6, this kernel has %d", abi))
	}
	if host && abi < 9 {
		lost = append(lost, fmt.Sprintf("unix sockets by path outside the grants (docker.sock, ssh-agent, the D-Bus session bus) stay reachable: Landlock covers them from ABI 9, this kernel has %d", abi))
	}
	if host && (len(spec.Network.TCPConnect) > 0 || len(spec.Network.TCPBind) > 0) && abi < 4 {
		lost = append(lost, fmt.Sprintf("tcp_connect/tcp_bind: Landlock port rules need ABI 4, this kernel has %d", abi))
	}
	lost = append(lost, "file metadata: chmod, chown, xattrs and timestamps of the user's own files outside the grants can still be changed (Landlock does not cover them)")
	return lost
}

// isTmp reports whether target is the host's temporary directory.
func isTmp(target string) bool {
	return target == "/tmp" || target == filepath.Clean(os.TempDir())
}

// carve is carveMore with nothing carved yet.
func carve(grants, masks []string, hides map[string]bool, ll *landlock.Config) ([]string, []string, error) {
	return carveMore(grants, masks, hides, ll, nil)
}

// carveMore returns grants with every mask beneath one of them carved out: such a grant is
// replaced by grants on the entries of each directory between it and the mask, except the
// one leading to the mask, and those directories go to ll.List so they can still be listed.
// A hide on the granted path itself removes the grant (hides sort after binds at the same
// target); a tmpfs or /dev there does not (the grant is a bind over it). carved collects the
// masks that were carved (each once).
func carveMore(grants, masks []string, hides map[string]bool, ll *landlock.Config, carved []string) ([]string, []string, error) {
	var out []string
	var walk func(path string) error
	walk = func(path string) error {
		var inner []string
		for _, m := range masks {
			if m == path && hides[m] {
				if !slices.Contains(carved, m) {
					carved = append(carved, m)
				}
				return nil // masked: no grant at all
			}
			if isBeneath(m, path) {
				inner = append(inner, m)
			}
		}
		if len(inner) == 0 {
			out = append(out, path)
			return nil
		}
		entries, err := os.ReadDir(path)
		if errors.Is(err, fs.ErrPermission) {
			return nil // unlistable to this user: left out whole, the safe side
		}
		if err != nil {
			return fmt.Errorf("carve the hidden %s out of the grant %s: %w", inner[0], path, err)
		}
		if !slices.Contains(ll.List, path) {
			ll.List = append(ll.List, path)
		}
		for _, e := range entries {
			if e.Type()&os.ModeSymlink != 0 {
				continue // a rule on a symlink lands on its target, which may be the hidden path
			}
			if err := walk(filepath.Join(path, e.Name())); err != nil {
				return err
			}
		}
		for _, m := range inner {
			if _, err := os.Lstat(m); err != nil && !slices.Contains(carved, m) {
				carved = append(carved, m) // nothing there to grant or hide
			}
		}
		return nil
	}
	for _, g := range grants {
		if err := walk(g); err != nil {
			return nil, nil, err
		}
	}
	return out, carved, nil
}

// isBeneath reports whether path lies strictly beneath dir.
func isBeneath(path, dir string) bool {
	return strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// createBlocked lists the carved directories inside write grants: Landlock gives them only the
// right to be listed, so nothing can be created or removed directly in them.
func createBlocked(list, write []string) []string {
	var out []string
	for _, d := range list {
		for _, w := range write {
			if d == w || isBeneath(d, w) {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// existing keeps the paths that exist on this host.
func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}
