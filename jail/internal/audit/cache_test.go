package audit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// TestTheKeptWalkSeesWhatAFreshWalkSees: a walk from the kept walk notes the same sentinels, with
// the same names, as a walk of the same tree with nothing kept: right after the walk was kept,
// and after each kind of change a run or the user makes between two runs (in a directory the
// kept walk lists, in an ignored tree, to an ignore file (made, changed or removed), a directory
// swapped for another, once the kept walk was written anew from a walk that took most of it from
// the one before). The tree holds more than minCachedDirs directories, or nothing would be kept.
func TestTheKeptWalkSeesWhatAFreshWalkSees(t *testing.T) {
	top, home := t.TempDir(), t.TempDir()
	files := map[string]string{
		".git/HEAD":                      "ref: refs/heads/main\n",
		".git/objects/.keep":             "",
		".git/info/exclude":              "secret*\n",
		".gitignore":                     "build/\n*.log\n",
		"a.log":                          "",
		"build/out/x.o":                  "",
		"sub/.gitignore":                 "local.txt\n",
		"sub/local.txt":                  "",
		"sub/other.txt":                  "",
		".venv/lib/site-packages/pip.py": "",
		".envrc":                         "",
		"pkg9/.gitignore":                "!keep.log\n",
		"pkg9/deep/keep.log":             "",
	}
	for i := range minCachedDirs + 6 {
		files[fmt.Sprintf("pkg%d/mod%d/f.py", i%10, i)] = ""
	}
	for p, text := range files {
		testutil.WriteFile(t, filepath.Join(top, p), text)
	}
	state := filepath.Join(t.TempDir(), "state") // made private by state.Open
	walk := func(kept bool) *Baseline {
		t.Helper()
		dir := state
		if !kept {
			dir = filepath.Join(t.TempDir(), "state")
		}
		t.Setenv("JAIL_RUNTIME_DIR", dir)
		b := Begin([]string{top}, home, filepath.Join(home, ".config"))
		b.Walk()
		return b
	}
	check := func(step string) {
		t.Helper()
		kept, fresh := walk(true), walk(false)
		if d := diffSentinels(kept.Sentinels, fresh.Sentinels); d != "" {
			t.Errorf("%s: the walk from the kept walk differs from a fresh one:\n%s", step, d)
		}
		if !slices.ContainsFunc(fresh.Sentinels, func(s Sentinel) bool { return s.Path == filepath.Join(top, "build/out") }) {
			t.Fatalf("%s: the ignored tree is not walked: %d sentinels", step, len(fresh.Sentinels))
		}
	}
	kept := func() []string {
		t.Helper()
		k, _ := filepath.Glob(filepath.Join(state, "audit-*"))
		if len(k) != 1 {
			t.Fatalf("kept walks %q, want one", k)
		}
		return k
	}
	walk(true) // keeps the walk
	// The walk reads the kept walk: a name changed there, and not in the tree, shows in it.
	b, err := os.ReadFile(kept()[0])
	if err == nil {
		err = os.WriteFile(kept()[0], bytes.Replace(b, []byte("f.py\x00"), []byte("g.py\x00"), 1), 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
	if diffSentinels(walk(true).Sentinels, walk(false).Sentinels) == "" {
		t.Fatal("a name changed in the kept walk does not show in the walk: the kept walk is not read")
	}
	rm(t, kept()[0])
	walk(true)
	check("unchanged")
	for _, c := range []struct {
		step string
		do   func()
	}{
		{"a file made", func() { testutil.WriteFile(t, filepath.Join(top, "pkg3/mod13/new.py"), "") }},
		{"a directory made", func() { testutil.WriteFile(t, filepath.Join(top, "pkg4/newdir/deeper/g.py"), "") }},
		{"an ignored file made", func() { testutil.WriteFile(t, filepath.Join(top, "build/out/y.o"), "") }},
		{"an ignored file changed in place", func() { testutil.WriteFile(t, filepath.Join(top, "build/out/x.o"), "changed") }},
		{"a directory removed", func() { rm(t, filepath.Join(top, "pkg5/mod15")) }},
		{"a directory swapped for another of the same name", func() {
			rm(t, filepath.Join(top, "pkg6/mod16"))
			testutil.WriteFile(t, filepath.Join(top, "pkg6/mod16/other.py"), "")
		}},
		{"files made in ten directories, which has the kept walk written anew", func() {
			for i := range 10 {
				testutil.WriteFile(t, filepath.Join(top, fmt.Sprintf("pkg%d/new.py", i)), "")
			}
		}},
		// The build before left the ignore files of the directories it did not list again out of
		// the walk it kept anew: an edit in place went unseen, and other.txt was no sentinel.
		{"an ignore file changed in place", func() { testutil.WriteFile(t, filepath.Join(top, "sub/.gitignore"), "local.txt\nother.txt\n") }},
		// Only the kept ignore files' ctimes say this: keep.log, shown until now, is ignored.
		{"an ignore file removed", func() { rm(t, filepath.Join(top, "pkg9/.gitignore")) }},
		{"a file removed", func() { rm(t, filepath.Join(top, "pkg3/mod3/f.py")) }},
		{"a file renamed", func() {
			if err := os.Rename(filepath.Join(top, "pkg4/mod4/f.py"), filepath.Join(top, "pkg4/mod4/h.py")); err != nil {
				t.Fatal(err)
			}
		}},
		{"an auto-run file changed in place", func() { testutil.WriteFile(t, filepath.Join(top, ".envrc"), "export X=1\n") }},
		{"an ignore file made", func() { testutil.WriteFile(t, filepath.Join(top, "pkg1/.gitignore"), "mod11/\n") }},
		{"the top's ignore file changed", func() { testutil.WriteFile(t, filepath.Join(top, ".gitignore"), "build/\n*.log\npkg2/\n") }},
		{"info/exclude changed", func() { testutil.WriteFile(t, filepath.Join(top, ".git/info/exclude"), "secret*\npkg7/\n") }},
		{"an auto-run file made", func() { testutil.WriteFile(t, filepath.Join(top, "pkg8/.npmrc"), "") }},
		{"the kept walk cut short", func() {
			k := kept()[0]
			b, err := os.ReadFile(k)
			if err != nil || os.WriteFile(k, b[:len(b)*2/3], 0o600) != nil {
				t.Fatal("cannot cut the kept walk short")
			}
		}},
	} {
		c.do()
		check(c.step)
	}
}

// diffSentinels says how a differs from b, by path; "" when they are the same.
func diffSentinels(a, b []Sentinel) string {
	byPath := func(s []Sentinel) map[string]string {
		m := map[string]string{}
		for _, x := range s {
			names := slices.Sorted(nulEnded(x.Names))
			m[x.Path] = fmt.Sprintf("ino %d ctime %v dir %v names %q", x.Ino, x.Ctime, x.Dir, names)
		}
		return m
	}
	ma, mb := byPath(a), byPath(b)
	var d []string
	for p, x := range ma {
		if y, ok := mb[p]; !ok || x != y {
			d = append(d, fmt.Sprintf("%s: %s, fresh: %s", p, x, cmpOr(y, "none")))
		}
	}
	for p, y := range mb {
		if _, ok := ma[p]; !ok {
			d = append(d, fmt.Sprintf("%s: none, fresh: %s", p, y))
		}
	}
	slices.Sort(d)
	return strings.Join(d, "\n")
}

func rm(t *testing.T, p string) {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
}
