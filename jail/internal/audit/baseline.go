// Package audit lists, at the end of a run, what the run wrote where the user will not see it:
// files git does not show (ignored, excluded, or outside any repository) and files tools run
// unasked (a .pth in a virtualenv, an .envrc, a hooks directory, a cargo or npm config). It
// prevents nothing — code the agent writes is code the user will run — but makes none of it
// invisible.
//
// Cost, for a run that writes nothing: before the sandbox can write, the host notes the time and
// walks the writable grants once, in the background, listing the sentinels: every directory git
// looks into (a file made, renamed or linked there changes its ctime), every ignored file and
// everything in an ignored directory (an in-place change there changes only the file's ctime),
// the ignore files themselves, and the auto-run files that exist. At the end, one statx per
// sentinel (in C, in jail's waiter, when the host has left) says whether any ctime moved past the
// start; ctime is the kernel's, which the sandbox cannot set back. Only then does the precise
// pass run (in Go: the host, or jail re-executed by the waiter as jail-audit).
package audit

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxSentinels bounds the files and directories a baseline watches one by one, and so the walk:
// beyond it (a huge ignored tree, a grant outside any repository such as the home), what the
// run does to the rest is not listed, and the list says so (Baseline.Partial).
const maxSentinels = 50_000

// Baseline is what the end of a run is compared with.
type Baseline struct {
	Start        unix.Timespec            // CLOCK_REALTIME_COARSE when the run began: ctimes come from it
	Touched      map[string]unix.Timespec // what the host changed, and its ctime then
	Grants       []string                 // the writable grants, physical paths
	Home, Config string                   // the user's home and config directory (global git excludes)
	Sentinels    []string                 // see the package comment
	Partial      bool                     // maxSentinels was reached
}

// Begin notes the start of a run writing to grants. Call it before the sandbox can write, once
// the host has made what it makes there (touched: the placeholders it made and the directories
// it made them in).
// ctimes are taken from a coarse clock, never later than CLOCK_REALTIME_COARSE: a file counts as
// changed when its ctime is at or past the start, except a touched directory, which counts only
// past its ctime now, so that the host's own changes are not the run's. (Looking at it now makes
// its next change fine-grained, on kernels from 6.13: on older ones, a change the sandbox makes
// to it within the same clock tick is missed.)
func Begin(grants, touched []string, home, config string) *Baseline {
	b := &Baseline{Grants: grants, Home: home, Config: config, Touched: map[string]unix.Timespec{}}
	unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &b.Start)
	for _, d := range touched {
		var st unix.Statx_t
		if unix.Statx(unix.AT_FDCWD, d, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_CTIME, &st) == nil {
			b.Touched[d] = unix.Timespec{Sec: st.Ctime.Sec, Nsec: int64(st.Ctime.Nsec) + 1}
		}
	}
	return b
}

// before says t is earlier than start.
func before(t unix.StatxTimestamp, start unix.Timespec) bool {
	return t.Sec < start.Sec || t.Sec == start.Sec && int64(t.Nsec) < start.Nsec
}

// Walk lists the sentinels. It may run while the sandbox runs: what changes meanwhile has a ctime
// past Start either way. It reads again only the directories whose ctime changed since a run
// walked them last (cache.go).
func (b *Baseline) Walk() {
	for _, g := range b.Grants {
		t := findTree(g, b.Home, b.Config)
		w := newWalker(b, t, g)
		switch {
		case t.gitDirItself:
			w.visit(filepath.Join(g, "info"), true)
		case t.ig == nil:
			w.visit(g, true) // outside a repository: git shows none of it
		case g != t.ig.top && t.ig.ignoredPath(t.ig.rel(g), true) != "":
			w.visit(g, true) // the grant lies in an ignored directory
		default:
			w.visit(g, false)
		}
		if w.stale { // an ignore file appeared where the cache did not know one: walk afresh
			b.Sentinels = b.Sentinels[:w.from]
			w = newWalker(b, t, g)
			w.cache = nil
			w.visit(g, false)
		}
		w.save()
	}
}

// tree is the git work tree a grant lies in, if any.
type tree struct {
	ig           *ignore // nil outside a repository: git shows nothing there
	gitDirItself bool    // the grant is a git directory (a worktree's common dir)
}

// findTree finds the work tree holding dir: the nearest directory at or above it with a .git.
func findTree(dir, home, config string) tree {
	if isGitDir(dir) {
		return tree{gitDirItself: true}
	}
	for d := dir; ; d = filepath.Dir(d) {
		if git := filepath.Join(d, ".git"); exists(git) {
			return tree{ig: newIgnore(d, gitDirOf(git), home, config)}
		}
		if d == "/" {
			return tree{}
		}
	}
}

// gitDirOf is the git directory a .git names: itself, or where a "gitdir:" file points.
func gitDirOf(git string) string {
	b, err := os.ReadFile(git)
	if err != nil {
		return git // a directory
	}
	if target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:"); ok {
		target = strings.TrimSpace(target)
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(git), target)
		}
		return target
	}
	return git
}

// isGitDir says whether dir is a git directory (a HEAD and objects inside).
func isGitDir(dir string) bool {
	return exists(filepath.Join(dir, "HEAD")) && exists(filepath.Join(dir, "objects"))
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// add adds one sentinel, up to maxSentinels.
func (b *Baseline) add(p string) {
	if len(b.Sentinels) >= maxSentinels {
		b.Partial = true
		return
	}
	b.Sentinels = append(b.Sentinels, p)
}

// autoRun says what runs p unasked, p relative to the grant it lies in.
func (b *Baseline) autoRun(p string) string {
	for _, g := range b.Grants {
		if rel, ok := strings.CutPrefix(p, g+"/"); ok {
			return runsAutomatically(rel)
		}
	}
	return ""
}

// readDir lists dir without following a symlink to it.
func readDir(dir string) ([]os.DirEntry, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	return f.ReadDir(-1)
}

// rel is p relative to the work tree's top.
func (ig *ignore) rel(p string) string {
	r, _ := filepath.Rel(ig.top, p)
	return r
}

// Encode is the baseline as jail's waiter reads it (spawn/audit.c): Start (seconds, then
// nanoseconds, int64), then entries, each a kind byte and a NUL-ended path: 'S' a sentinel,
// 'G' a grant, 'H' the home, 'C' the config directory, 'P' partial (no path), 'T' a touched
// directory ("SEC NSEC PATH": it counts as changed from that ctime on).
func (b *Baseline) Encode() []byte {
	out := binary.NativeEndian.AppendUint64(nil, uint64(b.Start.Sec))
	out = binary.NativeEndian.AppendUint64(out, uint64(b.Start.Nsec))
	entry := func(kind byte, p string) {
		out = append(append(append(out, kind), p...), 0)
	}
	for _, g := range b.Grants {
		entry('G', g)
	}
	entry('H', b.Home)
	entry('C', b.Config)
	if b.Partial {
		entry('P', "")
	}
	for _, s := range b.Sentinels {
		if t, ok := b.Touched[s]; ok {
			entry('T', strconv.FormatInt(t.Sec, 10)+" "+strconv.FormatInt(t.Nsec, 10)+" "+s)
		} else {
			entry('S', s)
		}
	}
	return out
}

// Decode reads what Encode wrote.
func Decode(data []byte) (*Baseline, error) {
	if len(data) < 16 {
		return nil, errors.New("audit baseline: too short")
	}
	b := &Baseline{Touched: map[string]unix.Timespec{}}
	b.Start.Sec = int64(binary.NativeEndian.Uint64(data))
	b.Start.Nsec = int64(binary.NativeEndian.Uint64(data[8:]))
	for rest := data[16:]; len(rest) > 1; {
		end := strings.IndexByte(string(rest), 0)
		if end < 1 {
			return nil, errors.New("audit baseline: an entry without its end")
		}
		kind, p := rest[0], string(rest[1:end])
		rest = rest[end+1:]
		switch kind {
		case 'S':
			b.Sentinels = append(b.Sentinels, p)
		case 'G':
			b.Grants = append(b.Grants, p)
		case 'H':
			b.Home = p
		case 'C':
			b.Config = p
		case 'P':
			b.Partial = true
		case 'T':
			sec, rest, _ := strings.Cut(p, " ")
			nsec, d, _ := strings.Cut(rest, " ")
			s, _ := strconv.ParseInt(sec, 10, 64)
			n, _ := strconv.ParseInt(nsec, 10, 64)
			b.Touched[d] = unix.Timespec{Sec: s, Nsec: n}
			b.Sentinels = append(b.Sentinels, d)
		}
	}
	return b, nil
}
