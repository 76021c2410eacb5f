package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/plan"
)

// Run is a change set that a sandbox is writing: its lock is held until Finish.
type Run struct {
	ChangeSet *ChangeSet
	lock      *os.File
}

// Begin creates the change set that spec's overlay workspace writes to, and holds its lock for
// the run; it returns nil when spec has no overlay. It runs on the host before the sandbox
// starts: the layers must exist for init to mount them, and the start time must come first.
func Begin(spec *plan.Spec) (*Run, error) {
	m, ok := spec.WorkspaceOverlay()
	if !ok {
		return nil, nil
	}
	dir := filepath.Dir(m.Upper)
	if upper, work := Layout(dir); m.Upper != upper || m.Work != work {
		return nil, fmt.Errorf("create change set: the plan's layers %s and %s are not a change set's", m.Upper, m.Work)
	}
	cs := &ChangeSet{ID: filepath.Base(dir), Dir: dir}
	if !ValidID(cs.ID) {
		return nil, fmt.Errorf("create change set %q: not a valid ID", cs.ID)
	}
	if err := makeStore(filepath.Dir(dir)); err != nil {
		return nil, err
	}
	tree, err := os.Stat(m.Source)
	if err != nil {
		return nil, fmt.Errorf("create change set %s: %w", cs.ID, err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create change set %s: %w", cs.ID, err)
	}
	r := &Run{ChangeSet: cs}
	err = r.create(spec, m, tree.Mode().Perm())
	if err != nil {
		r.release()
		RemoveTree(dir)
		return nil, fmt.Errorf("create change set %s: %w", cs.ID, err)
	}
	return r, nil
}

// create makes the layers, takes the lock and writes the manifest.
func (r *Run) create(spec *plan.Spec, m plan.Mount, treeMode os.FileMode) error {
	cs := r.ChangeSet
	// The upper layer's root is the overlay's root directory: it takes the tree root's mode.
	if err := os.Mkdir(m.Upper, treeMode); err != nil {
		return err
	}
	if err := os.Chmod(m.Upper, treeMode); err != nil { // past the umask
		return err
	}
	if err := os.Mkdir(m.Work, 0o700); err != nil {
		return err
	}
	lock, err := cs.lock(unix.LOCK_EX)
	if err != nil {
		return err
	}
	r.lock = lock
	var now unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &now); err != nil {
		return fmt.Errorf("read the clock: %w", err)
	}
	cs.Manifest = Manifest{
		ID: cs.ID, Tree: m.Source, Command: spec.Argv, Profile: spec.Profile,
		Started: time.Now().UTC(), Since: now.Nano(),
	}
	cs.Manifest.Protected = protected(spec, m.Target)
	return cs.writeManifest()
}

// Finish records the end of the run (status is the command's exit status, or nil when jail
// failed) and releases the lock. A change set without changes is removed: a run that wrote
// nothing leaves nothing. It returns how many changes the change set holds.
func (r *Run) Finish(status *int) (int, error) {
	defer r.release()
	return r.ChangeSet.finish(status)
}

// finish closes a change set whose sandbox has ended, under its lock: it removes overlayfs's
// scratch directory, records the end, and removes the change set if it holds no change.
func (cs *ChangeSet) finish(status *int) (int, error) {
	// overlayfs's scratch directory, which it leaves mode 0: nothing in it outlives the mount,
	// and left there it would stop an ordinary rm -r of the store.
	_, work := Layout(cs.Dir)
	RemoveTree(filepath.Join(work, "work"))
	changes, err := cs.Changes()
	if err == nil && len(changes) == 0 {
		return 0, RemoveTree(cs.Dir) // under the lock
	}
	now := time.Now().UTC()
	cs.Manifest.Ended, cs.Manifest.Status = &now, status
	if werr := cs.writeManifest(); werr != nil {
		return 0, fmt.Errorf("finish change set %s: %w", cs.ID, werr)
	}
	return len(changes), err
}

// ForSandbox makes the change set the workspace of the persistent sandbox it is named after
// (name: the sandbox's name, "" for none): it outlives the sandbox until applied or discarded.
func (r *Run) ForSandbox(name string) error {
	cs := r.ChangeSet
	cs.Manifest.Sandbox, cs.Manifest.Name = true, name
	return cs.writeManifest()
}

// Lock is the change set's lock, held while its sandbox lives: a persistent sandbox's keeper
// keeps a copy (the same open file, so the same lock) until the sandbox is gone.
func (r *Run) Lock() *os.File { return r.lock }

// Handed drops this process's copy of the lock, another (a keeper) holding it now.
func (r *Run) Handed() { r.release() }

// Abandon removes the change set of a sandbox that was never made.
func (r *Run) Abandon() {
	RemoveTree(r.ChangeSet.Dir)
	r.release()
}

// Settle finishes the change set of a persistent sandbox that has ended (jail rm, its timers,
// its keeper killed): as Finish does for a run. It returns how many changes wait, and an error
// (ErrInUse) while the sandbox lives.
func (cs *ChangeSet) Settle() (int, error) {
	f, err := cs.lock(unix.LOCK_EX)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return cs.finish(nil)
}

// settled settles the change set of a persistent sandbox that ended without jail settling it
// (its timers, its keeper killed, jail rm's fast path), and reports whether that removed it,
// holding no change.
func (cs *ChangeSet) settled() (gone bool) {
	if !cs.Manifest.Sandbox || cs.Manifest.Ended != nil || cs.running() {
		return false
	}
	n, err := cs.Settle()
	return n == 0 && err == nil
}

// release drops the lock.
func (r *Run) release() {
	if r.lock != nil {
		r.lock.Close()
		r.lock = nil
	}
}

// protected lists, relative to the workspace at target, the paths the plan protects there.
func protected(spec *plan.Spec, target string) []string {
	var out []string
	for _, m := range spec.Mounts {
		if rel, ok := relTo(target, m.Target); ok && rel != "" && m.Kind == plan.MountProtect {
			out = append(out, rel)
		}
	}
	return out
}

// makeStore creates the store directory (private to the user) and checks that no symlink
// leads to it: the plan names its physical path, and a link planted since could move the
// layers where the sandbox can reach them.
func makeStore(store string) error {
	if err := os.MkdirAll(store, 0o700); err != nil {
		return fmt.Errorf("create change-set store: %w", err)
	}
	real, err := filepath.EvalSymlinks(store)
	if err != nil {
		return fmt.Errorf("create change-set store: %w", err)
	}
	if real != store {
		return fmt.Errorf("create change-set store %s: it leads to %s through a symlink", store, real)
	}
	return nil
}

// lock takes the change set's lock, an flock of its directory, without waiting: how (LOCK_EX or
// LOCK_SH) is the lock's kind. The jail whose sandbox writes the change set holds it for the
// run; apply and discard hold it while they work.
func (cs *ChangeSet) lock(how int) (*os.File, error) {
	f, err := os.OpenFile(cs.Dir, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("lock change set %s: %w", cs.ID, err)
	}
	if err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			if cs.Manifest.Sandbox {
				return nil, fmt.Errorf("change set %s: %w: it is the workspace of a live sandbox (jail rm %s first)", cs.ID, ErrInUse, cs.SandboxName())
			}
			return nil, fmt.Errorf("change set %s: %w: its sandbox is still running, or another jail is applying it", cs.ID, ErrInUse)
		}
		return nil, fmt.Errorf("lock change set %s: %w", cs.ID, err)
	}
	return f, nil
}

// ErrInUse is the error of an operation on a change set that a live sandbox or another apply
// holds.
var ErrInUse = errors.New("in use")

// SandboxName names the change set's sandbox as its user knows it: its name, else its ID.
func (cs *ChangeSet) SandboxName() string {
	if cs.Manifest.Name != "" {
		return cs.Manifest.Name
	}
	return cs.ID
}

// running reports whether a jail holds the change set's lock (its sandbox is still running).
func (cs *ChangeSet) running() bool {
	f, err := cs.lock(unix.LOCK_SH)
	if err != nil {
		return true
	}
	f.Close()
	return false
}
