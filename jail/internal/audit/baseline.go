// Package audit lists, at the end of a run, what the run wrote where the user will not see it:
// files git does not show (ignored, excluded, or outside any repository) and files tools run
// unasked (a .pth in a virtualenv, an .envrc, a hooks directory, a cargo or npm config). It
// prevents nothing — code the agent writes is code the user will run — but makes none of it
// invisible.
//
// Cost, for a run that writes nothing: before the command starts, the host walks the writable
// grants once, while init builds the sandbox, and notes the sentinels with their inode and ctime:
// every directory git looks into, with the names it holds (a file made, renamed or linked there
// changes its ctime), every ignored file and everything in an ignored directory (a change in
// place moves only the file's ctime), the ignore files, and the auto-run files that exist. At the
// end, one statx per sentinel (in C, in jail's waiter, when the host has left; from a descriptor
// of its grant, grantdir.go) says whether any moved; ctime is the kernel's, which the sandbox
// cannot set back. Only then does the precise pass run (in Go: the host, or jail re-executed by
// the waiter as jail-audit): the new names in a directory that changed, the files that changed
// in place.
package audit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
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
	Grants       []string   // the writable grants, physical paths
	Home, Config string     // the user's home and config directory (global git excludes)
	Sentinels    []Sentinel // see the package comment
	Partial      bool       // maxSentinels was reached
	// Start is CLOCK_REALTIME_COARSE at Begin, no later than any ctime set after: once an ignore
	// file changed, the files changed since are looked for by it.
	Start stamp
	// places are where git saw each grant from at the walk, one per grant. The end classifies by
	// them: a repository that appears meanwhile (the run's own `git init`, anything's .git above
	// the grant) would otherwise make every file written there look shown by git.
	places []place
	// stdio are the files jail writes to through descriptors its caller gave it: its standard
	// input, output and error (`jail -- make > build.log`), --json-status-fd's. The user named
	// them, and jail's own lines go there too; they are no sentinels.
	stdio []fileID
}

// outputFiles are the regular files this process holds open for writing, and its stdio.
func outputFiles() []fileID {
	dir, err := os.Open("/proc/self/fd")
	if err != nil {
		return nil
	}
	names, _ := dir.Readdirnames(-1)
	var ids []fileID
	for _, n := range names {
		fd, err := strconv.Atoi(n)
		if err != nil || fd == int(dir.Fd()) {
			continue
		}
		var st unix.Stat_t
		fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if err == nil && unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG &&
			(fd <= 2 || fl&unix.O_ACCMODE != unix.O_RDONLY) {
			ids = append(ids, fileID{st.Dev, st.Ino})
		}
	}
	dir.Close()
	return ids
}

// fileID is a file's device and inode.
type fileID struct{ dev, ino uint64 }

// isStdio says whether p, of inode ino, is one of the baseline's stdio files.
func (b *Baseline) isStdio(p string, ino uint64) bool {
	for _, s := range b.stdio {
		var st unix.Stat_t
		if s.ino == ino && unix.Lstat(p, &st) == nil && st.Dev == s.dev && st.Ino == s.ino {
			return true
		}
	}
	return false
}

// Sentinel is a path as the walk saw it: its inode and ctime, and for a directory the names it
// held.
type Sentinel struct {
	Path  string
	Ino   uint64
	Ctime stamp
	Dir   bool
	Names string // each NUL-ended: as the kept walk holds them, so that a walk from it copies none
}

// holds says whether the directory s held name at the walk.
func (s *Sentinel) holds(name string) bool {
	for n := range nulEnded(s.Names) {
		if n == name {
			return true
		}
	}
	return false
}

// nulEnded are the NUL-ended strings of block, in order.
func nulEnded(block string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for block != "" {
			name, rest, _ := strings.Cut(block, "\x00")
			if !yield(name) {
				return
			}
			block = rest
		}
	}
}

// stamp is a ctime.
type stamp struct {
	sec  int64
	nsec uint32
}

// identity is p's inode and ctime, with whether it is a directory; ok is false when p is gone.
func identity(p string) (ino uint64, ctime stamp, dir, ok bool) {
	return identityAt(unix.AT_FDCWD, p, 0)
}

// identityAt is identity of p relative to the directory dirfd, with more statx flags.
func identityAt(dirfd int, p string, flags int) (ino uint64, ctime stamp, dir, ok bool) {
	var st unix.Statx_t
	if unix.Statx(dirfd, p, flags|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_CTIME|unix.STATX_TYPE, &st) != nil {
		return 0, stamp{}, false, false
	}
	return st.Ino, stamp{st.Ctime.Sec, st.Ctime.Nsec}, st.Mode&unix.S_IFMT == unix.S_IFDIR, true
}

// Begin begins the baseline of a run writing to grants.
func Begin(grants []string, home, config string) *Baseline {
	b := &Baseline{Grants: grants, Home: home, Config: config}
	var now unix.Timespec
	unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &now)
	b.Start = stamp{now.Sec, uint32(now.Nsec)}
	return b
}

// LeaveOutStdio notes jail's own output files (Baseline.stdio) and drops the sentinels the walk
// found to be one of them, when they are so still. Call it after Walk, before the baseline is
// used or encoded: not before the command starts, as the walk must be, since which files they
// are is this process's to say, not the sandbox's, and listing them (/proc/self/fd makes an inode
// for each descriptor) took 60-74 µs of the start in a fresh process. A sentinel dropped was that
// file at the walk and is now: its directory's ctime, a sentinel too, says whether it was swapped.
func (b *Baseline) LeaveOutStdio() {
	b.stdio = outputFiles()
	if len(b.stdio) > 0 {
		b.Sentinels = slices.DeleteFunc(b.Sentinels, func(s Sentinel) bool { return !s.Dir && b.isStdio(s.Path, s.Ino) })
	}
}

// Walk notes the sentinels. Finish it before the command starts: a sentinel is compared with
// what the walk saw. It lists again only the directories whose ctime moved since a run walked
// them last (cache.go). A file's change within the same clock tick as its last change before
// the walk keeps its ctime on kernels before 6.13; from 6.13 the walk's statx makes the next
// change's ctime fine-grained.
func (b *Baseline) Walk() {
	b.places = b.places[:0]
	for _, g := range b.Grants {
		p := locate(g)
		b.places = append(b.places, p)
		t := p.tree(b.Home, b.Config)
		d := openGrant(g)
		w := newWalker(b, t, d, true)
		w.start()
		if w.stale { // an ignore file appeared where the cache did not know one: walk afresh
			b.Sentinels = b.Sentinels[:w.from]
			w = newWalker(b, t, d, false)
			w.start()
		}
		w.save()
		d.close()
	}
}

// start visits the grant, as what git sees of it says.
func (w *walker) start() {
	t, g := w.t, w.grant.path
	switch {
	case t.gitDirItself:
		w.visit(g, "info", true)
	case t.ig == nil:
		w.visit(g, "", true) // outside a repository: git shows none of it
	case g != t.ig.top && t.ig.ignoredPath(t.ig.rel(g), true) != "":
		w.visit(g, "", true) // the grant lies in an ignored directory
	default:
		w.visit(g, "", false)
	}
}

// tree is the git work tree a grant lies in, if any.
type tree struct {
	ig           *ignore // nil outside a repository: git shows nothing there
	gitDirItself bool    // the grant is a git directory (a worktree's common dir)
}

// place is where git sees a directory from: the top of the work tree holding it and that tree's
// git directory; only the git directory when the directory is one itself; neither outside any
// repository.
type place struct{ top, gitDir string }

// locate finds the place of dir as git does: the nearest directory at or above it with a .git
// that is a git directory or names one. Git looks further up past any other .git, and so does
// this: an empty one above the grant (another run's placeholder, there while that run lasts)
// would make every file written look shown by git.
func locate(dir string) place {
	if isGitDir(dir) {
		return place{gitDir: dir}
	}
	for d := dir; ; d = filepath.Dir(d) {
		if git := filepath.Join(d, ".git"); exists(git) && isGitDir(gitDirOf(git)) {
			return place{top: d, gitDir: gitDirOf(git)}
		}
		if d == "/" {
			return place{}
		}
	}
}

// tree is the work tree at p, its ignore files read as they are now.
func (p place) tree(home, config string) tree {
	switch {
	case p.top != "":
		return tree{ig: newIgnore(p.top, p.gitDir, home, config)}
	case p.gitDir != "":
		return tree{gitDirItself: true}
	}
	return tree{}
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

// isGitDir says whether dir is a git directory: a HEAD, and objects of its own or of a common
// directory (a linked worktree's).
func isGitDir(dir string) bool {
	return exists(filepath.Join(dir, "HEAD")) &&
		(exists(filepath.Join(dir, "objects")) || exists(filepath.Join(dir, "commondir")))
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// add adds one sentinel, up to maxSentinels.
func (b *Baseline) add(s Sentinel) {
	if len(b.Sentinels) >= maxSentinels {
		b.Partial = true
		return
	}
	b.Sentinels = append(b.Sentinels, s)
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
// nanoseconds, int64), then entries, each a kind byte and NUL-ended text: 'S' a sentinel file and
// 'D' a sentinel directory ("INO SEC NSEC PATH"), each 'D' followed by its names ('n' NAME);
// 'G' a grant, each followed by its place ('W' the work tree's top, then 'w' its git directory,
// either empty), 'H' the home, 'C' the config directory, 'P' partial (no text), 'O' one of jail's
// standard files ("DEV INO").
func (b *Baseline) Encode() []byte {
	size := 16 + len(b.Home) + len(b.Config) + 8
	for _, g := range b.Grants {
		size += len(g) + 2
	}
	for _, p := range b.places {
		size += len(p.top) + len(p.gitDir) + 4
	}
	for _, s := range b.Sentinels {
		size += len(s.Path) + 48 + len(s.Names) + strings.Count(s.Names, "\x00") // each name a kind byte more
	}
	out := make([]byte, 0, size)
	out = binary.NativeEndian.AppendUint64(out, uint64(b.Start.sec))
	out = binary.NativeEndian.AppendUint64(out, uint64(b.Start.nsec))
	entry := func(kind byte, text string) {
		out = append(append(append(out, kind), text...), 0)
	}
	for i, g := range b.Grants {
		entry('G', g)
		if i < len(b.places) {
			entry('W', b.places[i].top)
			entry('w', b.places[i].gitDir)
		}
	}
	entry('H', b.Home)
	entry('C', b.Config)
	if b.Partial {
		entry('P', "")
	}
	for _, f := range b.stdio {
		entry('O', strconv.FormatUint(f.dev, 10)+" "+strconv.FormatUint(f.ino, 10))
	}
	for _, s := range b.Sentinels {
		kind := byte('S')
		if s.Dir {
			kind = 'D'
		}
		out = append(out, kind)
		out = strconv.AppendUint(out, s.Ino, 10)
		out = append(out, ' ')
		out = strconv.AppendInt(out, s.Ctime.sec, 10)
		out = append(out, ' ')
		out = strconv.AppendUint(out, uint64(s.Ctime.nsec), 10)
		out = append(append(append(out, ' '), s.Path...), 0)
		for n := range nulEnded(s.Names) {
			entry('n', n)
		}
	}
	return out
}

// Decode reads what Encode wrote.
func Decode(data []byte) (*Baseline, error) {
	if len(data) < 16 {
		return nil, errors.New("audit baseline: too short")
	}
	b := &Baseline{Start: stamp{int64(binary.NativeEndian.Uint64(data)), uint32(binary.NativeEndian.Uint64(data[8:]))}}
	var names []byte // the last directory's, NUL-ended
	endNames := func() {
		if len(names) > 0 {
			b.Sentinels[len(b.Sentinels)-1].Names = string(names)
			names = names[:0]
		}
	}
	for rest := data[16:]; len(rest) > 1; {
		end := bytes.IndexByte(rest, 0)
		if end < 1 {
			return nil, errors.New("audit baseline: an entry without its end")
		}
		kind := rest[0]
		if kind == 'n' {
			if len(b.Sentinels) == 0 {
				return nil, errors.New("audit baseline: a name before its directory")
			}
			names = append(names, rest[1:end+1]...)
			rest = rest[end+1:]
			continue
		}
		endNames()
		text := string(rest[1:end])
		rest = rest[end+1:]
		switch kind {
		case 'S', 'D':
			f := strings.SplitN(text, " ", 4)
			if len(f) != 4 {
				return nil, errors.New("audit baseline: a sentinel without its identity")
			}
			ino, _ := strconv.ParseUint(f[0], 10, 64)
			sec, _ := strconv.ParseInt(f[1], 10, 64)
			nsec, _ := strconv.ParseUint(f[2], 10, 32)
			b.Sentinels = append(b.Sentinels, Sentinel{Path: f[3], Ino: ino, Ctime: stamp{sec, uint32(nsec)}, Dir: kind == 'D'})
		case 'G':
			b.Grants = append(b.Grants, text)
		case 'W':
			if len(b.places) >= len(b.Grants) {
				return nil, errors.New("audit baseline: a place without its grant")
			}
			b.places = append(b.places, place{top: text})
		case 'w':
			if len(b.places) == 0 {
				return nil, errors.New("audit baseline: a git directory without its place")
			}
			b.places[len(b.places)-1].gitDir = text
		case 'H':
			b.Home = text
		case 'C':
			b.Config = text
		case 'P':
			b.Partial = true
		case 'O':
			var f fileID
			if _, err := fmt.Sscan(text, &f.dev, &f.ino); err != nil {
				return nil, errors.New("audit baseline: a standard file without its identity")
			}
			b.stdio = append(b.stdio, f)
		}
	}
	endNames()
	return b, nil
}
