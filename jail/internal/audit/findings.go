package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Finding is one file the run wrote where the user will not see it.
type Finding struct {
	Path string `json:"path"`
	// RunsAutomatically says what runs it unasked; empty when nothing on the list does.
	RunsAutomatically string `json:"runs_automatically,omitempty"`
	// NotShownByGit says why git status does not show it, if it does not: "ignored" (or
	// excluded), "inside .git", "outside any git repository".
	NotShownByGit string `json:"not_shown_by_git,omitempty"`
	// Under is the directory the file is counted under when many are (its shallowest ignored
	// ancestor, or the grant's entry it lies in outside a repository); the file itself otherwise.
	Under string `json:"-"`
}

// Changed says whether any sentinel is not what the walk saw: only then is there anything to
// find (spawn/audit.c asks the same in C). A sentinel gone is nothing to list.
func (b *Baseline) Changed() bool {
	dirs := b.openGrants()
	defer closeGrants(dirs)
	for _, s := range b.Sentinels {
		if s.moved(dirs) {
			return true
		}
	}
	return false
}

// moved says whether s is still there, but another inode or with another ctime; dirs are the
// grants' (openGrants).
func (s *Sentinel) moved(dirs []grantDir) bool {
	ino, ct, _, ok := identityIn(dirs, s.Path)
	return ok && (ino != s.Ino || ct != s.Ctime)
}

// Findings lists the files written since the walk that git does not show or that run unasked,
// sorted by path: new names in a directory that moved (everything beneath a new directory), and
// files that moved. A changed ignore file means git shows other things than it did: the grants
// are then looked at whole, for files changed since Begin.
func (b *Baseline) Findings() []Finding {
	written := map[string]bool{}
	dirs := b.openGrants()
	defer closeGrants(dirs)
	for _, s := range b.Sentinels {
		if !s.moved(dirs) {
			continue
		}
		if s.Dir && isDir(s.Path) {
			b.scanNew(s, written)
		} else {
			written[s.Path] = true
		}
	}
	for p := range written {
		if base := filepath.Base(p); base == ".gitignore" || strings.HasSuffix(p, "/info/exclude") {
			for _, g := range b.Grants {
				b.scanSince(g, written)
			}
			break
		}
	}
	trees := map[string]tree{}
	var out []Finding
	for p := range written {
		g := b.grantOf(p)
		if g == "" || isDir(p) {
			continue
		}
		t, ok := trees[g]
		if !ok {
			t = b.endTree(g)
			trees[g] = t
		}
		if f, ok := classify(p, g, t); ok {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b Finding) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// endTree is the work tree grant g lies in, to classify what the run wrote there: where the walk
// saw it, with its ignore files as they are now. Where git would look at g from elsewhere now (a
// repository made in or above it since, or the walk's gone), g counts as outside any
// repository: everything written there is listed, rather than a new .git hiding it.
func (b *Baseline) endTree(g string) tree {
	i := slices.Index(b.Grants, g)
	if i < 0 || i >= len(b.places) || locate(g) != b.places[i] {
		return tree{}
	}
	return b.places[i].tree(b.Home, b.Config)
}

// gitsOwn says whether dir/name is the git directory of a work tree the walk saw a grant in: its
// info/ is a sentinel of its own. A .git made anywhere else is the run's, and listed.
func (b *Baseline) gitsOwn(dir, name string) bool {
	return name == ".git" && slices.ContainsFunc(b.places, func(p place) bool { return p.top == dir })
}

// Why git does not show a file (Finding.NotShownByGit).
const (
	ignored      = "ignored"
	inGitDir     = "inside .git"
	noRepository = "outside any git repository"
)

// classify says whether p, written in grant g of tree t, is a finding.
func classify(p, g string, t tree) (Finding, bool) {
	rel := strings.TrimPrefix(p, g+"/")
	f := Finding{Path: p, Under: p}
	switch {
	case t.gitDirItself:
		f.NotShownByGit = inGitDir
		f.RunsAutomatically = runsAutomatically(".git/" + rel)
	case t.ig == nil:
		f.NotShownByGit = noRepository
		f.Under = filepath.Join(g, strings.Split(rel, "/")[0])
		f.RunsAutomatically = runsAutomatically(rel)
	default:
		top := t.ig.rel(p)
		f.RunsAutomatically = cmpOr(runsAutomatically(rel), runsAutomatically(top))
		if strings.HasPrefix(top, ".git/") {
			f.NotShownByGit = inGitDir
		} else if where := t.ig.ignoredPath(top, false); where != "" {
			f.NotShownByGit, f.Under = ignored, filepath.Join(t.ig.top, where)
		}
	}
	return f, f.NotShownByGit != "" || f.RunsAutomatically != ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// scanNew records the names in s, a directory that moved, that it did not hold at the walk,
// and everything beneath the new directories among them (but git's own directory, gitsOwn).
func (b *Baseline) scanNew(s Sentinel, written map[string]bool) {
	entries, err := readDir(s.Path)
	if err != nil {
		return
	}
	for _, e := range entries {
		if b.gitsOwn(s.Path, e.Name()) || s.holds(e.Name()) {
			continue
		}
		p := filepath.Join(s.Path, e.Name())
		if e.IsDir() {
			b.scanAll(p, written, nil)
		} else {
			written[p] = true
		}
	}
}

// scanSince records every file beneath the grant g changed since Begin.
func (b *Baseline) scanSince(g string, written map[string]bool) {
	b.scanAll(g, written, func(p string) bool {
		ino, ct, _, ok := identity(p)
		return ok && (ct.sec > b.Start.sec || ct.sec == b.Start.sec && ct.nsec >= b.Start.nsec) && !b.isStdio(p, ino)
	})
}

// scanAll records every file beneath dir that keep takes (nil: every one), but in git's own
// directory (gitsOwn).
func (b *Baseline) scanAll(dir string, written map[string]bool, keep func(string) bool) {
	entries, err := readDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case b.gitsOwn(dir, e.Name()):
		case e.IsDir():
			b.scanAll(p, written, keep)
		case keep == nil || keep(p):
			written[p] = true
		}
	}
}

// grantOf is the grant p lies in, "" for none.
func (b *Baseline) grantOf(p string) string {
	for _, g := range b.Grants {
		if strings.HasPrefix(p, g+"/") {
			return g
		}
	}
	return ""
}

func isDir(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && st.IsDir()
}

// maxLines bounds the lines Lines prints of each kind; --report lists every finding.
const maxLines = 10

// Lines are jail's lines for the findings (without "jail: "): one per file that runs unasked,
// then one per place git does not show, many files under one ignored directory counted as one.
// Paths are relative to dir when beneath it, and quoted when they hold what a terminal would
// act on: the sandbox chose them.
func Lines(fs []Finding, partial bool, dir string) []string {
	var lines []string
	show := func(p string) string {
		if r, ok := strings.CutPrefix(p, dir+"/"); ok {
			p = r
		}
		if q := strconv.QuoteToGraphic(p); q != `"`+p+`"` || strings.ContainsAny(p, " \t") {
			return q
		}
		return p
	}
	auto := 0
	for _, f := range fs {
		if f.RunsAutomatically == "" {
			continue
		}
		if auto++; auto <= maxLines {
			lines = append(lines, fmt.Sprintf("the run wrote %s, which tools act on unasked: %s", show(f.Path), f.RunsAutomatically))
		}
	}
	if auto > maxLines {
		lines = append(lines, fmt.Sprintf("the run wrote %d more files that tools act on unasked (--report lists them)", auto-maxLines))
	}
	groups := map[string]int{}
	why := map[string]string{}
	var order []string
	for _, f := range fs {
		if f.NotShownByGit != "" && f.RunsAutomatically == "" {
			if groups[f.Under]++; groups[f.Under] == 1 {
				order = append(order, f.Under)
				why[f.Under] = f.NotShownByGit
			}
		}
	}
	for i, under := range order {
		if i == maxLines {
			lines = append(lines, fmt.Sprintf("the run wrote in %d more places git does not show (--report lists them)", len(order)-maxLines))
			break
		}
		if n := groups[under]; n == 1 && !isDir(under) {
			lines = append(lines, fmt.Sprintf("the run wrote %s, which git does not show (%s)", show(under), why[under]))
		} else {
			lines = append(lines, fmt.Sprintf("the run wrote %d file(s) under %s/, which git does not show (%s)", n, show(under), why[under]))
		}
	}
	if partial {
		lines = append(lines, fmt.Sprintf("the writable grants hold more than %d files and directories git does not show: what the run did to the others is not listed", maxSentinels))
	}
	return lines
}
