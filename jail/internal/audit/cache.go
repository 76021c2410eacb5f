package audit

import (
	"bytes"
	"hash/fnv"
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/state"
)

// A directory whose ctime has not moved holds the same names: what a run's walk saw of it is
// still true, and the next run need not list it again, only statx it. The walk of each grant is
// kept in jail's state directory (package state), with the ignore files' ctimes: one that
// changed makes git ignore other things, and the whole walk is done afresh.

// dirRecord is what a walk saw of one directory: its path, its inode and ctime before it was
// listed, whether it lies in an ignored tree (then all of it is a sentinel), the names it held, the
// sentinel files in it, and its subdirectories. Lists are NUL-ended names in one string, as the
// kept walk holds them: a record read from it is slices of the file, copied nowhere.
type dirRecord struct {
	path    string
	ino     uint64
	ctime   stamp
	ignored bool
	names   string
	files   string
	subdirs string // each name after a byte: '1' when it lies in an ignored tree, '0' when not
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
	grant    grantDir         // to statx its sentinels from
	cache    *walkCache       // what the last walk saw; nil: none
	ignores  map[string]stamp // every ignore file this walk read, by path (zero: missing)
	visited  []*dirRecord     // what this walk saw, in the order it visited the directories
	relisted int              // directories listed afresh, the cache's being out of date
	stale    bool             // an ignore file is not the cache's: start again without it
	from     int              // len(b.Sentinels) when this grant's walk began
}

// walkCache is a walk kept in the state directory.
type walkCache struct {
	ignores map[string]stamp
	dirs    []dirRecord    // in the order the walk visited them: each directory before its subdirectories
	next    int            // the record of the directory the walk most likely visits next
	index   map[string]int // dirs by path, made when the walk first visits another
}

// newWalker is a walker of the grant d, from its kept walk when kept is true and the ignore files
// are as the kept walk saw them.
func newWalker(b *Baseline, t tree, d grantDir, kept bool) *walker {
	w := &walker{b: b, t: t, grant: d, from: len(b.Sentinels), ignores: map[string]stamp{}}
	if t.ig != nil {
		for _, p := range t.ig.files {
			w.ignores[p], _ = ctimeOf(p)
		}
	}
	if kept {
		w.cache = loadCache(d.path)
	}
	if w.cache != nil {
		for p, st := range w.cache.ignores {
			now, ok := w.ignores[p]
			if !ok {
				now, _ = ctimeOf(p)
			}
			if now != st {
				w.cache = nil
				return w
			}
		}
		b.Sentinels = slices.Grow(b.Sentinels, len(w.cache.dirs)+16)
	}
	return w
}

// visit adds the sentinels of the directory name in dir (dir itself when name is empty): itself,
// with its names, and, in an ignored tree, everything in it; elsewhere its ignored files and
// directories, its ignore file and what runs unasked.
func (w *walker) visit(dir, name string, ignored bool) {
	r, p := w.cache.find(dir, name)
	ino, ct, isDir, ok := w.grant.identity(p)
	if !ok || !isDir || w.b.Partial {
		return
	}
	kept := r != nil && r.ino == ino && r.ctime == ct && r.ignored == ignored
	if !kept {
		w.relisted++
		if r = w.list(p, ino, ct, ignored); r == nil {
			return
		}
	}
	w.visited = append(w.visited, r)
	w.b.add(Sentinel{Path: p, Ino: ino, Ctime: ct, Dir: true, Names: r.names})
	for f := range nulEnded(r.files) {
		fp := join(p, f)
		ino, ct, _, ok := w.grant.identity(fp)
		if kept && f == ".gitignore" && !ignored { // as list notes it
			w.readIgnore(fp, ct)
		}
		if ok {
			w.b.add(Sentinel{Path: fp, Ino: ino, Ctime: ct})
		}
	}
	for d := range nulEnded(r.subdirs) {
		if len(d) > 1 { // a name after its byte: anything shorter is no record of this walk's
			w.visit(p, d[1:], d[0] == '1')
		}
	}
}

// list reads dir afresh.
func (w *walker) list(dir string, ino uint64, ct stamp, ignored bool) *dirRecord {
	entries, err := readDir(dir)
	if err != nil {
		return nil
	}
	ig := w.t.ig
	if !ignored {
		if gitignore := join(dir, ".gitignore"); slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() == ".gitignore" }) {
			st, _ := ctimeOf(gitignore) // before it is read, below
			w.readIgnore(gitignore, st)
		} else {
			ig.noIgnoreFile(ig.rel(dir)) // no need to try to open it
		}
	}
	var names, files, subdirs strings.Builder
	add := func(name string, isDir, ignored bool) { // a file as a sentinel, a directory to visit
		list := &files
		if isDir {
			list = &subdirs
			subdirs.WriteByte(flag(ignored)[0])
		}
		list.WriteString(name)
		list.WriteByte(0)
	}
	for _, e := range entries {
		name, p := e.Name(), join(dir, e.Name())
		names.WriteString(name)
		names.WriteByte(0)
		switch {
		case name == ".git" && !ignored:
			if e.IsDir() { // only info/ of git's own files hides or runs anything
				add(".git/info", true, true)
			}
		case ignored:
			add(name, e.IsDir(), true)
		case ig.ignored(ig.rel(p), e.IsDir()):
			add(name, e.IsDir(), true)
		case e.IsDir():
			add(name, true, false)
		case name == ".gitignore" || w.b.autoRun(p) != "":
			add(name, false, false)
		}
	}
	return &dirRecord{path: dir, ino: ino, ctime: ct, ignored: ignored,
		names: names.String(), files: files.String(), subdirs: subdirs.String()}
}

// readIgnore notes the ignore file p, of ctime ct, that the walk reads, and whether the kept walk
// saw it so. A directory taken from the kept walk notes its own too: the walk kept next must list
// every one, or an edit in place to one of them would go unseen (the build before left out those
// of every directory not listed afresh).
func (w *walker) readIgnore(p string, ct stamp) {
	w.ignores[p] = ct
	if w.cache != nil && w.cache.ignores[p] != ct {
		w.stale = true
	}
}

// find is the kept record of the directory name in dir (dir itself when name is empty), nil when
// there is none, and that directory's path. The walk visits the directories in the order the kept
// walk did, but where they changed: a record is most often the one after the last found, and
// found without a map or a path made.
func (c *walkCache) find(dir, name string) (*dirRecord, string) {
	if c != nil && c.next < len(c.dirs) && isJoin(c.dirs[c.next].path, dir, name) {
		c.next++
		return &c.dirs[c.next-1], c.dirs[c.next-1].path
	}
	p := join(dir, name)
	if c == nil {
		return nil, p
	}
	if c.index == nil {
		c.index = make(map[string]int, len(c.dirs))
		for i := range c.dirs {
			c.index[c.dirs[i].path] = i
		}
	}
	i, ok := c.index[p]
	if !ok {
		return nil, p
	}
	c.next = i + 1
	return &c.dirs[i], p
}

// join is the path of name in dir, dir itself when name is empty: filepath.Join of a clean path
// and a name from its listing, without Clean's pass.
func join(dir, name string) string {
	switch {
	case name == "":
		return dir
	case strings.HasSuffix(dir, "/"):
		return dir + name
	}
	return dir + "/" + name
}

// isJoin says whether p is join(dir, name).
func isJoin(p, dir, name string) bool {
	rest, ok := strings.CutPrefix(p, dir)
	switch {
	case !ok:
		return false
	case name == "":
		return rest == ""
	case !strings.HasSuffix(dir, "/"):
		if rest == "" || rest[0] != '/' {
			return false
		}
		rest = rest[1:]
	}
	return rest == name
}

func flag(v bool) string {
	if v {
		return "1"
	}
	return "0"
}

// cacheFile is the name of grant's walk in the state directory. It names the format: builds of
// jail that write another one keep theirs apart rather than each walking afresh after the other.
func cacheFile(grant string) string {
	h := fnv.New64a()
	h.Write([]byte(grant))
	return "audit-" + cacheVersion + "-" + strconv.FormatUint(h.Sum64(), 16)
}

// The cache file: "jail-audit 4", the grant and the number of directory records, then records,
// every field NUL-ended (paths may hold any byte but NUL): "I" path sec nsec for an ignore file;
// "D" path ino sec nsec ignored N F S for a directory, followed by its names, its sentinel files
// and its subdirectories (dirRecord), N, F and S bytes long: a record's lists are read by slicing,
// not by name. Directories come in the order the walk visited them, which the next walk follows.
const (
	cacheVersion = "4"
	cacheMagic   = "jail-audit " + cacheVersion
)

// minCachedDirs is the fewest directories a grant's walk is kept for: below it, listing them
// again costs about what reading the cache would, and nothing need be left behind.
const minCachedDirs = 64

// save writes what this walk saw, unless what was kept is close enough: a few directories listed
// afresh at each run (the working directory, where placeholders come and go) cost less than
// rewriting the whole walk each time. Renamed into place: a concurrent run reads the old or the
// new.
func (w *walker) save() {
	if len(w.visited) < minCachedDirs {
		return
	}
	if w.cache != nil {
		gone := max(0, len(w.cache.dirs)-(len(w.visited)-w.relisted)) // at most
		if (w.relisted+gone)*32 <= len(w.visited) {
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
	field(cacheMagic, w.grant.path, strconv.Itoa(len(w.visited)))
	for p, st := range w.ignores {
		field("I", p, num(st.sec), num(int64(st.nsec)))
	}
	for _, r := range w.visited {
		field("D", r.path, strconv.FormatUint(r.ino, 10), num(r.ctime.sec), num(int64(r.ctime.nsec)), flag(r.ignored),
			strconv.Itoa(len(r.names)), strconv.Itoa(len(r.files)), strconv.Itoa(len(r.subdirs)))
		b.WriteString(r.names)
		b.WriteString(r.files)
		b.WriteString(r.subdirs)
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
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Size <= 0 {
		return nil
	}
	// Read in one call into a string that the records' fields are slices of: the file is whole
	// (renamed into place, never written again), and the byte past its size says so.
	buf := make([]byte, st.Size+1)
	if n, err := unix.Read(fd, buf); err != nil || n != int(st.Size) {
		return nil
	}
	data := unsafe.String(&buf[0], st.Size) // buf is never written again
	// fields reads the next len(f) fields into f.
	fields := func(f []string) bool {
		for i := range f {
			end := strings.IndexByte(data, 0)
			if end < 0 {
				return false
			}
			f[i], data = data[:end], data[end+1:]
		}
		return true
	}
	var head [3]string
	if !fields(head[:]) || head[0] != cacheMagic || head[1] != grant {
		return nil
	}
	n, err := strconv.Atoi(head[2])
	if err != nil || n < 0 || n > len(data) {
		return nil
	}
	c := &walkCache{ignores: map[string]stamp{}, dirs: make([]dirRecord, 0, n)}
	var f [9]string
	for data != "" {
		switch data[0] {
		case 'I':
			if !fields(f[:4]) || f[0] != "I" {
				return nil
			}
			c.ignores[f[1]] = parseStamp(f[2], f[3])
		case 'D':
			if !fields(f[:9]) || f[0] != "D" {
				return nil
			}
			var lists [3]string
			for i := range lists {
				n, err := strconv.Atoi(f[6+i])
				if err != nil || n < 0 || n > len(data) || n > 0 && data[n-1] != 0 {
					return nil
				}
				lists[i], data = data[:n], data[n:]
			}
			ino, _ := strconv.ParseUint(f[2], 10, 64)
			c.dirs = append(c.dirs, dirRecord{path: f[1], ino: ino, ctime: parseStamp(f[3], f[4]), ignored: f[5] == "1",
				names: lists[0], files: lists[1], subdirs: lists[2]})
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
