package audit

import (
	"bytes"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/state"
)

// A directory whose ctime has not moved holds the same names: what a run's walk saw of it is
// still true, and the next run need not list it again, only statx it. The walk of each grant is
// kept in jail's state directory (package state), with the ignore files' ctimes: one that
// changed makes git ignore other things, and the whole walk is done afresh.

// dirRecord is what a walk saw of one directory: its inode and ctime before it was listed, whether
// it lies in an ignored tree (then all of it is a sentinel), the names it held, the sentinel
// files in it, and its subdirectories.
type dirRecord struct {
	ino     uint64
	ctime   stamp
	ignored bool
	names   []string
	files   []string
	subdirs []subdir
}

type subdir struct {
	name    string
	ignored bool
}

// ctimeOf is p's ctime; ok is false when p is gone (the ignore files' record: gone is a state).
func ctimeOf(p string) (stamp, bool) {
	_, ct, _, ok := identity(p)
	return ct, ok
}

// walker walks one grant for a baseline, from its cache.
type walker struct {
	b        *Baseline
	t        tree
	grant    grantDir   // to statx its sentinels from
	cache    *walkCache // what the last walk saw; nil: none
	seen     *walkCache // what this walk sees
	relisted int        // directories listed afresh, the cache's being out of date
	stale    bool       // an ignore file is not the cache's: start again without it
	from     int        // len(b.Sentinels) when this grant's walk began
}

type walkCache struct {
	ignores map[string]stamp // every ignore file read, by path (zero: missing)
	dirs    map[string]*dirRecord
}

func newWalker(b *Baseline, t tree, d grantDir) *walker {
	w := &walker{b: b, t: t, grant: d, from: len(b.Sentinels),
		seen: &walkCache{ignores: map[string]stamp{}, dirs: map[string]*dirRecord{}}}
	w.cache = loadCache(d.path)
	if w.cache != nil {
		for p, st := range w.cache.ignores {
			if now, _ := ctimeOf(p); now != st {
				w.cache = nil
				break
			}
		}
	}
	if t.ig != nil {
		for _, p := range t.ig.files {
			st, _ := ctimeOf(p)
			w.seen.ignores[p] = st
		}
	}
	return w
}

// visit adds the sentinels of dir: itself, with its names, and, in an ignored tree, everything in
// it; elsewhere its ignored files and directories, its ignore file and what runs unasked.
func (w *walker) visit(dir string, ignored bool) {
	ino, ct, isDir, ok := w.grant.identity(dir)
	if !ok || !isDir || w.b.Partial {
		return
	}
	r := w.cache.dir(dir)
	if r == nil || r.ino != ino || r.ctime != ct || r.ignored != ignored {
		w.relisted++
		if r = w.list(dir, ino, ct, ignored); r == nil {
			return
		}
	}
	w.seen.dirs[dir] = r
	w.b.add(Sentinel{Path: dir, Ino: ino, Ctime: ct, Dir: true, Names: r.names})
	for _, f := range r.files {
		p := filepath.Join(dir, f)
		if ino, ct, _, ok := w.grant.identity(p); ok && !w.b.isStdio(p, ino) {
			w.b.add(Sentinel{Path: p, Ino: ino, Ctime: ct})
		}
	}
	for _, d := range r.subdirs {
		w.visit(filepath.Join(dir, d.name), d.ignored)
	}
}

// list reads dir afresh.
func (w *walker) list(dir string, ino uint64, ct stamp, ignored bool) *dirRecord {
	entries, err := readDir(dir)
	if err != nil {
		return nil
	}
	r := &dirRecord{ino: ino, ctime: ct, ignored: ignored}
	ig := w.t.ig
	if !ignored {
		gitignore := filepath.Join(dir, ".gitignore")
		if slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() == ".gitignore" }) {
			st, _ := ctimeOf(gitignore)
			w.seen.ignores[gitignore] = st
			if w.cache != nil && w.cache.ignores[gitignore] != st {
				w.stale = true
			}
		} else {
			ig.noIgnoreFile(ig.rel(dir)) // no need to try to open it
		}
	}
	for _, e := range entries {
		name, p := e.Name(), filepath.Join(dir, e.Name())
		r.names = append(r.names, name)
		switch {
		case name == ".git" && !ignored:
			if e.IsDir() { // only info/ of git's own files hides or runs anything
				r.subdirs = append(r.subdirs, subdir{".git/info", true})
			}
		case ignored:
			r.add(name, e.IsDir(), true)
		case ig.ignored(ig.rel(p), e.IsDir()):
			r.add(name, e.IsDir(), true)
		case e.IsDir():
			r.add(name, true, false)
		case name == ".gitignore" || w.b.autoRun(p) != "":
			r.files = append(r.files, name)
		}
	}
	return r
}

// add adds an entry: a file as a sentinel, a directory to visit.
func (r *dirRecord) add(name string, isDir, ignored bool) {
	if isDir {
		r.subdirs = append(r.subdirs, subdir{name, ignored})
	} else {
		r.files = append(r.files, name)
	}
}

func (c *walkCache) dir(p string) *dirRecord {
	if c == nil {
		return nil
	}
	return c.dirs[p]
}

// cacheFile is the name of grant's walk in the state directory.
func cacheFile(grant string) string {
	h := fnv.New64a()
	h.Write([]byte(grant))
	return "audit-" + strconv.FormatUint(h.Sum64(), 16)
}

// The cache file: "jail-audit 3", the grant, then records, every field NUL-ended (paths may hold
// any byte but NUL): "I" path sec nsec for an ignore file; "D" path ino sec nsec ignored N F S for
// a directory, followed by its N names, its F sentinel files and its S subdirectories (name,
// ignored): counted, so that a directory's names are a slice of the file's fields.
const cacheMagic = "jail-audit 3"

// minCachedDirs is the fewest directories a grant's walk is kept for: below it, listing them
// again costs about what reading the cache would, and nothing need be left behind.
const minCachedDirs = 64

// save writes what this walk saw, unless what was kept is close enough: a few directories listed
// afresh at each run (the working directory, where placeholders come and go) cost less than
// rewriting the whole walk each time. Renamed into place: a concurrent run reads the old or the
// new.
func (w *walker) save() {
	if len(w.seen.dirs) < minCachedDirs {
		return
	}
	if w.cache != nil {
		gone := max(0, len(w.cache.dirs)-(len(w.seen.dirs)-w.relisted)) // at most
		if (w.relisted+gone)*32 <= len(w.seen.dirs) {
			return
		}
	}
	dir, err := state.Open()
	if err != nil {
		return
	}
	defer dir.Close()
	var b bytes.Buffer
	field := func(s ...string) {
		for _, f := range s {
			b.WriteString(f)
			b.WriteByte(0)
		}
	}
	num := func(n int64) string { return strconv.FormatInt(n, 10) }
	flag := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	field(cacheMagic, w.grant.path)
	for p, st := range w.seen.ignores {
		field("I", p, num(st.sec), num(int64(st.nsec)))
	}
	for p, r := range w.seen.dirs {
		field("D", p, strconv.FormatUint(r.ino, 10), num(r.ctime.sec), num(int64(r.ctime.nsec)), flag(r.ignored),
			strconv.Itoa(len(r.names)), strconv.Itoa(len(r.files)), strconv.Itoa(len(r.subdirs)))
		field(r.names...)
		field(r.files...)
		for _, d := range r.subdirs {
			field(d.name, flag(d.ignored))
		}
	}
	name := cacheFile(w.grant.path)
	tmp := name + ".new-" + strconv.Itoa(os.Getpid())
	fd, err := unix.Openat(int(dir.Fd()), tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return
	}
	_, err = unix.Write(fd, b.Bytes())
	unix.Close(fd)
	if err == nil {
		err = unix.Renameat(int(dir.Fd()), tmp, int(dir.Fd()), name)
	}
	if err != nil {
		unix.Unlinkat(int(dir.Fd()), tmp, 0)
	}
}

// loadCache reads the walk of grant kept in the state directory; nil when there is none, or it
// is not whole.
func loadCache(grant string) *walkCache {
	dir, err := state.Open()
	if err != nil {
		return nil
	}
	defer dir.Close()
	fd, err := unix.Openat(int(dir.Fd()), cacheFile(grant), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), "audit cache")
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return nil
	}
	var buf strings.Builder // read once, into a string that the records' fields are slices of
	buf.Grow(int(st.Size) + 1)
	if _, err := io.Copy(&buf, f); err != nil {
		return nil
	}
	fields := strings.Split(buf.String(), "\x00")
	if len(fields) < 3 || fields[0] != cacheMagic || fields[1] != grant {
		return nil
	}
	c := &walkCache{ignores: map[string]stamp{}, dirs: map[string]*dirRecord{}}
	fields = fields[2 : len(fields)-1] // the last is what follows the last NUL
	take := func(n int) []string {
		if n < 0 || n > len(fields) {
			return nil
		}
		f := fields[:n:n]
		fields = fields[n:]
		return f
	}
	for len(fields) > 0 {
		switch fields[0] {
		case "I":
			f := take(4)
			if f == nil {
				return nil
			}
			c.ignores[f[1]] = parseStamp(f[2], f[3])
		case "D":
			f := take(9)
			if f == nil {
				return nil
			}
			ino, _ := strconv.ParseUint(f[2], 10, 64)
			r := &dirRecord{ino: ino, ctime: parseStamp(f[3], f[4]), ignored: f[5] == "1"}
			nn, e1 := strconv.Atoi(f[6])
			nf, e2 := strconv.Atoi(f[7])
			ns, e3 := strconv.Atoi(f[8])
			if e1 != nil || e2 != nil || e3 != nil || nn+nf+2*ns > len(fields) || nn < 0 || nf < 0 || ns < 0 {
				return nil
			}
			r.names, r.files = take(nn), take(nf)
			r.subdirs = make([]subdir, ns)
			for i := range r.subdirs {
				f := take(2)
				r.subdirs[i] = subdir{f[0], f[1] == "1"}
			}
			c.dirs[f[1]] = r
		default:
			return nil
		}
	}
	return c
}

func parseStamp(sec, nsec string) stamp {
	s, _ := strconv.ParseInt(sec, 10, 64)
	n, _ := strconv.ParseUint(nsec, 10, 32)
	return stamp{s, uint32(n)}
}
