package audit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestIgnoreAgreesWithGit: on a tree with .gitignore files at two levels, info/exclude, negations,
// anchored and directory-only patterns and `**`, every path is ignored exactly when
// `git check-ignore` says so.
func TestIgnoreAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	top, home := t.TempDir(), t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = top
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM=1")
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	git("init", "-q")
	files := map[string]string{
		".gitignore":        "*.log\n!keep.log\n/build/\nnode_modules\ndocs/**/*.tmp\n\\#hash\n.env\n**/cache/\n",
		"sub/.gitignore":    "local.txt\n/anchored\n*.pyc\n!important.pyc\n",
		".git/info/exclude": "secret*\n",
		"a.log":             "", "keep.log": "", "sub/b.log": "",
		"build/x": "", "sub/build/x": "",
		"node_modules/m/i.js": "", "sub/node_modules/y": "",
		"docs/a/b/c.tmp": "", "docs/c.tmp": "", "other/c.tmp": "",
		"#hash": "", ".env": "", "sub/.env": "",
		"sub/local.txt": "", "local.txt": "",
		"sub/anchored": "", "sub/deep/anchored": "",
		"sub/x.pyc": "", "sub/important.pyc": "", "x.pyc": "",
		"secret.txt": "", "sub/secret2": "",
		"sub/cache/z": "", "cache/z": "", "plain.txt": "",
		".venv/lib/site.pth": "",
	}
	var paths []string
	for p, text := range files {
		full := filepath.Join(top, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(p, ".git/") {
			paths = append(paths, p)
		}
	}
	ig := newIgnore(top, filepath.Join(top, ".git"), home, filepath.Join(home, ".config"))
	for _, p := range paths {
		want := strings.TrimSpace(git("check-ignore", "--no-index", p)) == p
		if got := ig.ignoredPath(p, false) != ""; got != want {
			t.Errorf("%s: ignored %v, git says %v", p, got, want)
		}
	}
}
