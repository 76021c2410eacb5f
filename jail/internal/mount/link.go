package mount

import (
	"errors"
	"path"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/plan"
)

// symlink creates Target as a symlink whose text is Source (the host's merged-/usr links). An
// existing identical link is fine; anything else already there is an error.
func (r *Roots) symlink(m plan.Mount) error {
	if m.Target == "/" {
		return unix.EEXIST
	}
	parent, err := openTarget(r.new, path.Dir(m.Target), makeDir)
	if err != nil {
		return err
	}
	defer CloseFd(parent)
	name := path.Base(m.Target)
	err = unix.Symlinkat(m.Source, parent, name)
	if errors.Is(err, unix.EEXIST) {
		buf := make([]byte, len(m.Source)+1)
		if n, rerr := unix.Readlinkat(parent, name, buf); rerr == nil && string(buf[:n]) == m.Source {
			return nil
		}
	}
	return err
}

// dir creates Target as an empty directory (with its missing parents), or keeps the one there.
func (r *Roots) dir(m plan.Mount) error {
	return closed(openTarget(r.new, m.Target, makeDir))
}
