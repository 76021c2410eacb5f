package mount

import (
	"golang.org/x/sys/unix"
)

// ready holds the mounts no plan changes, made while init waits for its plan (Prepare) rather
// than once it has come, when the command waits for each of them: every plan has a /proc and a
// /dev (profiles), whose procfs, devpts instance and clones of the host's device nodes depend
// only on the namespaces init was started in. Each is a detached mount, close-on-exec, taken by
// the op that attaches it (-1 once taken, or when making it failed: the op then makes it itself,
// and fails, as it would have); what no op took is closed with the roots.
type ready struct {
	proc  int
	pts   int
	nodes [len(devNodes)]int
}

// noneReady is a ready with nothing made.
func noneReady() ready {
	r := ready{proc: -1, pts: -1}
	for i := range r.nodes {
		r.nodes[i] = -1
	}
	return r
}

// Prepare makes the ready mounts, in the scratch root OpenRoots entered, before the plan comes.
// A failure is not an error here: the op that needs the mount makes it again and reports it.
// The same calls as the ops' own, from the same namespaces: a procfs shows init's pid namespace
// whenever it is made, and is refused under a container's masks either way (proc.go).
func (r *Roots) Prepare() {
	r.ready.proc, _ = newFS("proc", procAttrs)
	r.ready.pts, _ = newPts()
	for i, name := range devNodes {
		r.ready.nodes[i], _ = cloneDevNode(r.host, name)
	}
}

// take returns the ready mount *fd, or -1, and marks it taken.
func take(fd *int) int {
	t := *fd
	*fd = -1
	return t
}

// close closes the ready mounts no op took.
func (d *ready) close() {
	for _, fd := range append([]int{d.proc, d.pts}, d.nodes[:]...) {
		if fd >= 0 {
			CloseFd(fd)
		}
	}
	*d = noneReady()
}

// newPts makes the detached devpts instance of the minimal /dev (dev.go).
func newPts() (int, error) {
	return newFS("devpts", unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC, "newinstance", "ptmxmode=0666", "mode=0620")
}

// cloneDevNode makes a detached bind of the host's /dev/NAME.
func cloneDevNode(host int, name string) (int, error) {
	return unix.OpenTree(host, "dev/"+name, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_SYMLINK_NOFOLLOW)
}
