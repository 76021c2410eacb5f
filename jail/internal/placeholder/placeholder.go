// Package placeholder makes the placeholders that protections of missing paths sit on, and holds
// them for one run, so that jail leaves nothing in the user's tree once the last sandbox using
// them has ended.
//
// A protected path that does not exist yet (.envrc, .vscode) must still be masked, or the
// sandbox could create it, and a mount needs an inode to sit on: the host makes a placeholder
// there before the sandbox's setup binds it read-only onto itself. A placeholder is a socket
// inode (mknod S_IFSOCK): git lists no socket, so `git status` shows none, inside the sandbox or
// out; nothing can open one (ENXIO), write it, or make anything beneath it (ENOTDIR); and it has
// no data block, so making and removing it costs a few microseconds where a directory cost
// milliseconds on a busy ext4 (freeing its block). A run's sockets in one directory are one inode,
// hard-linked under each name (Take says why). Only the directories pinned above a protected
// path (self-binds) are directories. Two sandboxes
// may run in one directory, and removing a placeholder that another sandbox's protection sits on
// would unmask it there (the kernel detaches a mount in every other namespace when its
// mountpoint is removed). So placeholders are shared, under a lock per directory:
//
//   - the directory's record file, in jail's per-user state directory and named after the
//     directory's device and inode, lists the placeholders jail made there (inode, birth time,
//     kind, name), each announced before it is made;
//   - a run takes it shared (flock LOCK_SH) before it makes or relies on any placeholder there,
//     makes the missing ones and records them, and holds it until its sandbox is gone: the host
//     holds it, and hands it to jail's waiter when it leaves early;
//   - at the end, whoever gets it exclusively without waiting (no other run holds it) removes
//     every recorded placeholder that is still jail's (same inode and birth time, of its kind),
//     then the record file (spawn.ReleasePlaceholders, in C, for the waiter).
//
// A run killed before its end leaves its placeholders and records; the next run in that
// directory removes them at its own end. docs/architecture.md says why this is race-free.
package placeholder

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/spawn"
	"github.com/jail-sandbox/jail/jail/internal/state"
	"github.com/jail-sandbox/jail/plan"
)

// Claim is a run's hold on the placeholders of its plan: the state directory, then a record file
// (locked shared) and the directory it records, for each directory that holds a protected path,
// shallowest first. The zero Claim holds nothing.
type Claim struct {
	files []*os.File
}

// Take makes every protected path of mounts exist, as a placeholder where it is missing, and
// returns the hold on them. A protected path, or a directory pinned above one (a self-bind),
// that is missing now is made (a socket, or a directory for a self-bind), even when it existed
// at resolution: the run that made it may have ended since and removed it. Beneath an overlay
// the tree is not written at all: setup makes those in the overlay's own layer.
func Take(mounts []plan.Mount) (*Claim, error) {
	c := &Claim{}
	var stateDir *os.File
	dirs := map[string]int{} // directory → index of its record file in c.files
	// The first socket this run made in each directory, by the same index: the others there are
	// hard links to it. On an ext4 without a journal, as this project's VMs have, allocating an
	// inode skips every recently deleted one in its group, and the placeholders every run makes
	// and removes pile those up: nine sockets made and removed cost about 1 ms of CPU, one socket
	// and eight links to it 0.15 ms (a C loop, in a benchmark's repository).
	sockets := map[int]*spawn.PlaceholderRecord{}
	for i, m := range mounts {
		if !plan.OnPlaceholder(mounts, i) {
			continue
		}
		if stateDir == nil {
			s, err := state.Open()
			if err != nil {
				return nil, fmt.Errorf("placeholders: %w", err)
			}
			stateDir = s
			c.files = append(c.files, stateDir)
		}
		parent, name := filepath.Dir(m.Target), filepath.Base(m.Target)
		i, ok := dirs[parent]
		if !ok {
			lock, dir, err := lockDir(stateDir, parent)
			if err != nil {
				c.Release()
				return nil, err
			}
			i = len(c.files)
			dirs[parent] = i
			c.files = append(c.files, lock, dir)
		}
		made, err := make1(c.files[i], c.files[i+1], name, m.Kind == plan.MountBind, sockets[i])
		if err != nil {
			c.Release()
			return nil, fmt.Errorf("placeholder %s: %w", m.Target, err)
		}
		if made != nil && !made.Dir && sockets[i] == nil {
			sockets[i] = made
		}
	}
	return c, nil
}

// Files are the descriptors of the hold, for jail's waiter to release (spawn.Waiter.HandOver).
// Nil-safe.
func (c *Claim) Files() []*os.File {
	if c == nil {
		return nil
	}
	return c.files
}

// Release ends the hold once the sandbox is gone (spawn.ReleasePlaceholders). Nil-safe; a
// second call does nothing.
func (c *Claim) Release() {
	if c == nil {
		return
	}
	spawn.ReleasePlaceholders(c.files)
	c.files = nil
}

// lockDir opens the directory path (physical: no symlink is followed) and its record file in
// state, created if missing, and locks the record file shared. A record file that its last
// holder removed while this run waited for the lock is not the directory's any more: the lock is
// taken again on the one that replaces it.
func lockDir(state *os.File, path string) (lock, dir *os.File, err error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return nil, nil, fmt.Errorf("placeholders in %s: %w", path, err)
	}
	dir = os.NewFile(uintptr(fd), path)
	name, err := recordName(dir)
	for err == nil {
		fd, err = unix.Openat(int(state.Fd()), name, unix.O_RDWR|unix.O_CREAT|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			break
		}
		lock = os.NewFile(uintptr(fd), name)
		if err = flock(lock, unix.LOCK_SH); err != nil {
			break
		}
		var st unix.Stat_t
		if err = unix.Fstat(fd, &st); err == nil && st.Nlink > 0 {
			return lock, dir, nil
		}
		lock.Close() // removed by the run that held it last: take the new one
		lock = nil
	}
	if lock != nil {
		lock.Close()
	}
	dir.Close()
	return nil, nil, fmt.Errorf("placeholders in %s: record file: %w", path, err)
}

// recordName is the name of dir's record file in the state directory: its device and inode,
// which stay while it lives wherever it is moved (placeholders.c: record_name).
func recordName(dir *os.File) (string, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(dir.Fd()), &st); err != nil {
		return "", err
	}
	return strconv.FormatUint(st.Dev, 16) + "-" + strconv.FormatUint(st.Ino, 16), nil
}

// flock takes a lock on f, waiting for it.
func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// make1 makes name in dir as a placeholder when it is missing, a directory or a socket (a hard
// link to like when this run made one there already; nil: none), recorded in lock: announced
// first (an intent), then rewritten in place as made, so that a run killed in between leaves a
// record the next run can still act on. One that exists (the user's, or another run's
// placeholder) is protected as it is. Returns the record of what it made, if anything.
func make1(lock, dir *os.File, name string, isDir bool, like *spawn.PlaceholderRecord) (*spawn.PlaceholderRecord, error) {
	var st unix.Stat_t
	if unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		return nil, nil
	}
	rec := spawn.PlaceholderRecord{IntentNs: time.Now().UnixNano(), Dir: isDir, Name: name}
	off, err := appendRecord(lock, rec.Bytes())
	if err != nil {
		return nil, err
	}
	err = unix.ENOENT
	if like != nil && !isDir {
		// Should what like names have been replaced since, the record below holds what was
		// linked, and the end of the run leaves it alone unless it is the same socket.
		err = unix.Linkat(int(dir.Fd()), like.Name, int(dir.Fd()), name, 0)
	}
	switch {
	case err == nil || errors.Is(err, unix.EEXIST):
	case isDir:
		err = unix.Mkdirat(int(dir.Fd()), name, 0o755)
	default:
		err = unix.Mknodat(int(dir.Fd()), name, unix.S_IFSOCK|0o644, 0)
	}
	var stx unix.Statx_t
	if err == nil {
		err = unix.Statx(int(dir.Fd()), name, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_BTIME, &stx)
	}
	switch {
	case err == nil:
		rec.State, rec.Ino = spawn.PlaceholderMade, stx.Ino
		if stx.Mask&unix.STATX_BTIME != 0 {
			rec.BtimeSec, rec.BtimeNsec = stx.Btime.Sec, stx.Btime.Nsec
		}
	case errors.Is(err, unix.EEXIST): // made meanwhile, by another run or the user
		rec.State, err = spawn.PlaceholderVoid, nil
	default:
		rec.State = spawn.PlaceholderVoid
	}
	if werr := rewriteRecord(lock, off, rec.Bytes()); err == nil {
		err = werr
	}
	if rec.State != spawn.PlaceholderMade {
		return nil, err
	}
	return &rec, err
}

// appendRecord appends b to the record file lock in one write (O_APPEND: other runs holding the
// lock shared may append theirs) and returns where it landed.
func appendRecord(lock *os.File, b []byte) (int64, error) {
	if _, err := lock.Write(b); err != nil {
		return 0, err
	}
	end, err := lock.Seek(0, io.SeekCurrent) // the end of this write, whatever others appended since
	return end - int64(len(b)), err
}

// rewriteRecord writes b over the record at off. O_APPEND is lifted for it (pwrite would append).
func rewriteRecord(lock *os.File, off int64, b []byte) error {
	fd := int(lock.Fd())
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags&^unix.O_APPEND); err != nil {
		return err
	}
	_, err = unix.Pwrite(fd, b, off)
	unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags)
	return err
}
