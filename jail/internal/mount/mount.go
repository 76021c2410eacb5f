package mount

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/jail/internal/spawn"
	"github.com/jail-sandbox/jail/jail/internal/verbose"
	"github.com/jail-sandbox/jail/plan"
)

// SetupRoot builds the sandbox's filesystem from spec.Mounts and makes it the root: in r, the
// scratch root OpenRoots entered, the tmpfs new root is populated by each op in order, remounted
// read-only, pivot_root moves into it and the host's tree is detached. It runs in sandbox init,
// inside fresh user, mount and pid namespaces.
//
// Every mount uses the new mount API (open_tree, mount_setattr, fsopen/fsmount, move_mount,
// Linux 5.12): a read-only bind is cloned detached, made read-only on every submount in one
// mount_setattr that only sets MOUNT_ATTR_RDONLY, so the flags the kernel locks in a user
// namespace (nosuid, nodev, noexec, atime) stay as they were, and only then attached: it is
// never visible writable, and no mountinfo has to be read.
//
// made, unless nil, waits until the host has made the placeholders: it is called once, before the
// first op that mounts on one (plan.OnPlaceholder), and its error ends the setup as it is.
func SetupRoot(spec *plan.Spec, r *Roots, log verbose.Log, made func() error) error {
	r.home = envValue(spec.Env, "HOME")
	r.allowWeaker = spec.AllowWeaker
	r.mounts = spec.Mounts
	r.storeSize = spec.Limits.Tmpfs
	for i, m := range spec.Mounts {
		if made != nil && plan.OnPlaceholder(spec.Mounts, i) {
			if err := made(); err != nil {
				r.close()
				return err
			}
			made = nil
		}
		log.Printf("%s %s", m.Kind, Object(m))
		mnt, err := r.apply(m)
		if err == nil && r.exposed(m) {
			err = r.watch(m, mnt) // watch.go
		}
		if mnt >= 0 {
			CloseFd(mnt)
		}
		if err == nil && m.Kind == plan.MountBind {
			r.writable = append(r.writable, m.Target)
		}
		if err == nil && m.Target == "/" {
			err = r.reopenNew() // a mount now covers the new root: later targets are on it
		}
		if err != nil {
			r.close()
			return mountError(m, err)
		}
	}
	return r.enter()
}

// roots holds the two trees setup works between, as O_PATH descriptors: the host's (sources)
// and the new root (targets). Every lookup is relative to one of them and never follows a
// symlink (see openIn).
type Roots struct {
	host   int    // the host's root, /oldroot after the first pivot
	new    int    // the new root, /newroot, on the topmost mount there
	rootfs int    // the new root's own tmpfs (the same descriptor as new unless an op covered it)
	home   string // $HOME inside, whose tmpfs is private to the user (mode 0700)
	// allowWeaker says the plan allows the container's /proc where the kernel refuses a new
	// one (proc.go).
	allowWeaker bool
	// ContainerProc says /proc is the container's, bound (containerProc).
	ContainerProc bool
	// mounts is the whole plan: an overlay makes the placeholders of the ops beneath it
	// (overlay.go), each overlay in a directory of its own (overlays counts them).
	mounts   []plan.Mount
	overlays int
	// store is the tmpfs holding every private writable mount (store.go), -1 until one is
	// made; storeSize its size, storeDirs how many directories it has.
	store     int
	storeSize uint64
	storeDirs int
	// writable are the writable binds made so far, Watched the mounts made inside them, which
	// the setup names to pid 1, and watchErr why pid 1 cannot watch them (WatchErr; watch.go).
	writable []string
	Watched  []spawn.Watched
	watchErr error
	// ready are the mounts made before the plan came (ready.go).
	ready ready
}

// WatchErr says why pid 1 cannot watch the mounts made inside writable binds; a plan that makes
// one then fails (watch.go).
func (r *Roots) WatchErr(err error) {
	r.watchErr = err
}

// apply runs one setup op. For the ops that make one mount at their target (the kinds exposed
// may watch), it returns that mount's descriptor, which the caller closes; -1 otherwise.
func (r *Roots) apply(m plan.Mount) (int, error) {
	switch m.Kind {
	case plan.MountROBind:
		return r.bind(m, true)
	case plan.MountBind:
		return r.bind(m, false)
	case plan.MountProtect:
		return r.selfBind(m, true)
	case plan.MountPin:
		return r.selfBind(m, false)
	case plan.MountHideDir:
		return r.hideDir(m)
	case plan.MountHideFile:
		return r.hideFile(m)
	}
	return -1, r.applyOther(m)
}

// applyOther runs the ops apply returns no mount of.
func (r *Roots) applyOther(m plan.Mount) error {
	switch m.Kind {
	case plan.MountOverlay:
		return r.overlay(m)
	case plan.MountTmpfs:
		return r.tmpfs(m)
	case plan.MountProc:
		return r.proc(m)
	case plan.MountDev:
		return r.dev(m)
	case plan.MountSymlink:
		return r.symlink(m)
	case plan.MountDir:
		return r.dir(m)
	}
	return errors.New("unknown mount kind")
}

// object names what an op works on, for its log line and its error: "SOURCE on TARGET" for
// binds, "TARGET -> TEXT" for symlinks, the target otherwise.
func Object(m plan.Mount) string {
	switch m.Kind {
	case plan.MountROBind, plan.MountBind:
		return m.Source + " on " + m.Target
	case plan.MountOverlay:
		return m.Upper + " over " + m.Source + " on " + m.Target
	case plan.MountSymlink:
		return m.Target + " -> " + m.Source
	}
	return m.Target
}

// mountError makes the one-line *Error for a failed op, with a hint where the cause is known.
func mountError(m plan.Mount, err error) *fail.Error {
	e := fail.New(string(m.Kind), Object(m), err)
	switch {
	case errors.Is(err, syscall.ENOSYS):
		e.Hint = "jail needs Linux 5.12 or later (openat2, open_tree, mount_setattr)"
	case errors.Is(err, syscall.ELOOP):
		e.Hint = "a symlink lies on the path; paths were resolved before setup, which follows none"
	case m.Kind == plan.MountOverlay && !errors.Is(err, syscall.ENOENT):
		e.Hint = "an overlay needs overlayfs in a user namespace (Linux 5.11 or later) and its upper layer on a filesystem " +
			"with user extended attributes (the change-set store, XDG_STATE_HOME; git commit mode's, TMPDIR); " +
			"--workspace bind writes the tree itself"
	case m.Kind == plan.MountProc && errors.Is(err, syscall.EPERM):
		e.Hint = ProcMaskedHint
	}
	return e
}

// ProcMaskedHint explains a refused /proc: what refuses it and the two ways on.
const ProcMaskedHint = "the container masks parts of its /proc, and the kernel then refuses the sandbox a /proc of its own; " +
	"unmask the container's /proc (Docker: --security-opt systempaths=unconfined; Podman: --security-opt unmask=ALL; " +
	"Kubernetes: procMount: Unmasked), or pass --allow-weaker to bind the container's /proc, masks kept, " +
	"which lists the container's processes (jail doctor says which works here)"

// envValue returns NAME's value in a KEY=VALUE environment, or "".
func envValue(env []string, name string) string {
	for _, kv := range env {
		if len(kv) > len(name) && kv[len(name)] == '=' && kv[:len(name)] == name {
			return kv[len(name)+1:]
		}
	}
	return ""
}

// CloseFd closes a descriptor setup opened; a close error on an O_PATH or mount fd means
// nothing to setup.
func CloseFd(fd int) {
	_ = unix.Close(fd)
}
