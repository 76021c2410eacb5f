package main

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
	"github.com/jail-sandbox/jail/workspace/workspacetest"
)

// The overlay workspace, attacked and used from the outside: jail runs with --workspace overlay,
// a change-set store of the test's own (XDG_STATE_HOME), and the real tree is compared, byte for
// byte, before and after.

// overlayRun is one test's change-set store and the options that run jail with it.
type overlayRun struct {
	t     *testing.T
	state string
}

func newOverlayRun(t *testing.T) *overlayRun {
	return &overlayRun{t: t, state: t.TempDir()}
}

// jail runs jail with args in dir, with the test's store.
func (o *overlayRun) jail(dir string, args ...string) (stdout, stderr string, code int) {
	o.t.Helper()
	return runJailWith(o.t, runOpts{dir: dir, env: []string{"XDG_STATE_HOME=" + o.state}}, args...)
}

// run runs script under sh with --workspace overlay (and extra options) in dir, and returns the
// ID of the change set it left ("" for none).
func (o *overlayRun) run(dir, script string, extra ...string) string {
	o.t.Helper()
	args := append(append([]string{"--workspace", "overlay"}, extra...), "--", "sh", "-c", script)
	_, errOut, code := o.jail(dir, args...)
	if code == exitFailure {
		o.t.Fatalf("%q: jail failed: %s", script, errOut)
	}
	m := regexp.MustCompile(`wait in change set ([0-9a-f]+)`).FindStringSubmatch(errOut)
	if m == nil {
		return ""
	}
	return m[1]
}

// treeState is the state of the tree at dir (workspacetest.State), .git included.
func treeState(t *testing.T, dir string) string {
	t.Helper()
	s, err := workspacetest.State(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// committed makes a repository with one commit in a fresh directory.
func committed(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	testutil.WriteFile(t, filepath.Join(dir, "main.py"), "print('hi')\n")
	testutil.WriteFile(t, filepath.Join(dir, "sub", "lib.py"), "x = 1\n")
	git(t, dir, "add", ".")
	git(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
	return dir
}

// workspaceAttack is one attempt, from inside, to plant what the host later runs: the script,
// the host action that would run it, and the path apply must refuse.
type workspaceAttack struct {
	name    string
	script  string // $P is the marker file the payload creates
	subdir  string // where jail runs, relative to the repository ("" for its top)
	host    []string
	refused string // a change apply refuses (or the start of its path), relative to where jail ran
}

var workspaceAttacks = []workspaceAttack{
	{"hook", `printf '#!/bin/sh\ntouch %s\n' "$P" > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout`,
		"", []string{"checkout", "-q", "HEAD"}, ".git/hooks/post-checkout"},
	{"config fsmonitor", `git config core.fsmonitor "touch $P; echo"`,
		"", []string{"status"}, ".git/config"},
	{"commondir", `cp -r .git x && git config -f x/config core.fsmonitor "touch $P; echo" && echo ../x > .git/commondir`,
		"", []string{"status"}, ".git/commondir"},
	{"gitlink to a nested repository", `git init -q lib && git -C lib -c user.name=t -c user.email=t@t commit -q --allow-empty -m m &&
		git -C lib config core.fsmonitor "touch $P; echo" && git update-index --add --cacheinfo 160000,$(git -C lib rev-parse HEAD),lib`,
		"", []string{"status"}, "lib/.git"},
	{".git in a subdirectory", `git init -q && git config core.fsmonitor "touch $P; echo"`,
		"sub", []string{"status"}, ".git"},
	{".git file pointing home", `echo "gitdir: $HOME" > .git.new && rm -rf .git 2>/dev/null; mv .git.new .git`,
		"", nil, ".git"},
	{"info/exclude hides a planted file", `echo 'evil.pth' >> .git/info/exclude; echo 'import os' > evil.pth`,
		"", nil, ".git/info/exclude"},
	{".envrc", `echo "touch $P" > .envrc`, "", nil, ".envrc"},
	{".vscode tasks", `mkdir -p .vscode && echo '{"tasks":[]}' > .vscode/tasks.json`, "", nil, ".vscode/tasks.json"},
	{"a .pth file in a virtualenv", `mkdir -p .venv/lib/python3/site-packages && echo "import os; os.system('touch $P')" > .venv/lib/python3/site-packages/x.pth`,
		"", nil, ".venv/lib/python3/site-packages/x.pth"},
	{"husky hook", `mkdir -p .husky && printf 'touch %s\n' "$P" > .husky/pre-commit`, "", nil, ".husky/pre-commit"},
	{"cargo config", `mkdir -p .cargo && printf '[build]\nrustc-wrapper = "/tmp/evil"\n' > .cargo/config.toml`, "", nil, ".cargo/config.toml"},
	{"npmrc", `echo 'script-shell=/tmp/evil' > .npmrc`, "", nil, ".npmrc"},
	{"symlink out of the tree", `ln -s /etc/passwd passwd`, "", nil, "passwd"},
}

// bareProfile is an overlay profile without any protection (no protect, no git rules): the
// attack reaches the change set, and apply alone must refuse it.
func bareProfile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bare.toml")
	testutil.WriteFile(t, p, `[filesystem]
read = ["/usr", "/etc", "/bin?", "/sbin?", "/lib?", "/lib64?"]
write = ["$CWD"]
tmpfs = ["/tmp", "~"]
workspace = "overlay"
[git]
mode = "off"
[process]
env = ["PATH", "P"]
`)
	return p
}

// TestWorkspaceAttacks runs each attack of the integrity issues with --workspace overlay, under
// agent and under a profile with no protections and no git rules at all: the real tree stays
// byte-identical, the host's git runs no payload, and jail apply writes nothing the payload could
// run from — without protections it refuses the change set naming the path, and under agent,
// whatever it takes, the host's git still runs no payload. Each attack is shown to work without
// jail, so that the test can fail.
func TestWorkspaceAttacks(t *testing.T) {
	bare := bareProfile(t)
	for _, a := range workspaceAttacks {
		t.Run(a.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "P")
			// Without jail, the attack works.
			plain := committed(t)
			sh := exec.Command("sh", "-c", a.script)
			sh.Dir, sh.Env = filepath.Join(plain, a.subdir), append(os.Environ(), "P="+marker)
			if out, err := sh.CombinedOutput(); err != nil {
				t.Fatalf("the attack fails even without jail: %v: %s", err, out)
			}
			if a.host != nil {
				hostGit(a.host...)(t, filepath.Join(plain, a.subdir), nil)
				if _, err := os.Stat(marker); err != nil {
					t.Fatalf("without jail, git %v ran no payload: the attack is not real", a.host)
				}
				os.Remove(marker)
			}
			for _, profile := range []string{"agent", bare} {
				name := filepath.Base(profile)
				o := newOverlayRun(t)
				repo := committed(t)
				dir := filepath.Join(repo, a.subdir)
				before := treeState(t, repo)
				id := o.run(dir, a.script, "-p", profile, "--env", "P="+marker)
				if after := treeState(t, repo); after != before {
					t.Fatalf("-p %s: the real tree changed:\n%s\nwas:\n%s", name, after, before)
				}
				hostAction := func(when string) {
					if a.host != nil {
						hostGit(a.host...)(t, dir, nil)
					}
					if _, err := os.Stat(marker); err == nil {
						t.Fatalf("-p %s: %s, the host's git ran the planted payload", name, when)
					}
				}
				hostAction("after the run")
				if id == "" {
					if profile == bare {
						t.Fatalf("-p %s: the attack left no change set", name)
					}
					continue // agent's protections kept the attack out of the change set
				}
				_, errOut, code := o.jail(dir, "apply", id)
				refused := code == exitRefused && strings.Contains(errOut, "refused "+a.refused)
				if profile == bare && !refused {
					t.Errorf("-p %s: jail apply: exit %d, want %d refusing %s:\n%s", name, code, exitRefused, a.refused, errOut)
				}
				if code == exitRefused && treeState(t, repo) != before {
					t.Errorf("-p %s: a refused apply changed the tree", name)
				}
				hostAction("after jail apply")
			}
		})
	}
}

// TestWorkspaceHomeAsTree: with the home directory itself as the working directory (and the
// store elsewhere), an appended ~/.bashrc stays in the change set and apply refuses it.
func TestWorkspaceHomeAsTree(t *testing.T) {
	home := t.TempDir()
	testutil.WriteFile(t, filepath.Join(home, ".bashrc"), "# rc\n")
	marker := filepath.Join(t.TempDir(), "P")
	o := newOverlayRun(t)
	before := treeState(t, home)
	_, errOut, code := runJailWith(t, runOpts{dir: home, env: []string{"HOME=" + home, "XDG_STATE_HOME=" + o.state}},
		"--workspace", "overlay", "--", "sh", "-c", "echo 'touch "+marker+"' >> ~/.bashrc")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if treeState(t, home) != before {
		t.Fatal("the real home changed")
	}
	bash := exec.Command("bash", "-i", "-c", "true")
	bash.Env = append(os.Environ(), "HOME="+home)
	bash.Run()
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("an interactive bash ran the payload")
	}
	_, errOut, code = runJailWith(t, runOpts{dir: home, env: []string{"HOME=" + home, "XDG_STATE_HOME=" + o.state}}, "apply")
	if code != exitRefused || !strings.Contains(errOut, "refused .bashrc:") {
		t.Errorf("jail apply: exit %d, want .bashrc refused:\n%s", code, errOut)
	}
}

// roundTripScript edits, creates, deletes, renames (a file and a directory), chmods, links, and
// makes and removes directories.
const roundTripScript = `set -e
echo more >> main.py
printf 'new\n' > new.txt
rm sub/lib.py
mkdir -p pkg/inner && echo 'x' > pkg/inner/mod.py
mv main.py app.py
mv docs manual
chmod 755 tool.sh
chmod 600 notes.txt
ln -s app.py current
mkdir empty
rm -r gone
printf 'bin\0ary' > data.bin
`

// roundTripTree is the tree the script runs in.
func roundTripTree(t *testing.T) string {
	t.Helper()
	dir := committed(t)
	for name, content := range map[string]string{
		"docs/a.md": "a\n", "docs/b.md": "b\n", "tool.sh": "#!/bin/sh\n", "notes.txt": "n\n", "gone/x": "x\n", "gone/y/z": "z\n",
	} {
		testutil.WriteFile(t, filepath.Join(dir, name), content)
	}
	return dir
}

// TestWorkspaceRoundTrip: a run in the overlay, then apply, gives the tree the same command makes
// run directly on a copy.
func TestWorkspaceRoundTrip(t *testing.T) {
	o := newOverlayRun(t)
	tree := roundTripTree(t)
	direct := t.TempDir()
	if out, err := exec.Command("cp", "-a", tree+"/.", direct).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	sh := exec.Command("sh", "-c", roundTripScript)
	sh.Dir = direct
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("the script without jail: %v: %s", err, out)
	}
	before := treeState(t, tree)
	id := o.run(tree, roundTripScript)
	if id == "" || treeState(t, tree) != before {
		t.Fatalf("change set %q; the tree changed during the run: %v", id, treeState(t, tree) != before)
	}
	diff, errOut, code := o.jail(tree, "diff", id)
	if code != 0 {
		t.Fatalf("jail diff: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"rename from docs/a.md\nrename to manual/a.md", "deleted file mode 100644", "new file mode 120000",
		"old mode 100644\nnew mode 100755", "# mode of notes.txt: 0644 -> 0600", "# new directory empty/", "Binary files /dev/null and b/data.bin differ"} {
		if !strings.Contains(diff, want) {
			t.Errorf("jail diff lacks %q:\n%s", want, diff)
		}
	}
	stat := exec.Command("git", "apply", "--stat", "-")
	stat.Dir, stat.Stdin = t.TempDir(), strings.NewReader(diff)
	if out, err := stat.CombinedOutput(); err != nil || !strings.Contains(string(out), "files changed") {
		t.Errorf("git apply --stat: %v: %s", err, out)
	}
	out, errOut, code := o.jail(tree, "apply", id)
	if code != 0 {
		t.Fatalf("jail apply: exit %d: %s%s", code, out, errOut)
	}
	if got, want := treeState(t, tree), treeState(t, direct); got != want {
		t.Errorf("after apply:\n%s\nthe script run directly:\n%s", got, want)
	}
	if out, _, _ := o.jail(tree, "changes"); strings.Contains(out, id) {
		t.Errorf("the applied change set is still listed:\n%s", out)
	}
}

// TestWorkspaceConflicts: a file the user edits during or after the run stops apply, naming it;
// the other changes go in by path (from a subdirectory, and without an ID); --overwrite takes
// the sandbox's version.
func TestWorkspaceConflicts(t *testing.T) {
	o := newOverlayRun(t)
	tree := committed(t)
	id := o.run(tree, "echo sandbox >> main.py; echo sandbox >> sub/lib.py; mkdir newdir; echo n > newdir/x")
	testutil.WriteFile(t, filepath.Join(tree, "main.py"), "the user's edit\n")
	_, errOut, code := o.jail(tree, "apply", id)
	if code != exitRefused || !strings.Contains(errOut, "conflict main.py: changed in the tree since the run started") {
		t.Fatalf("jail apply: exit %d: %s", code, errOut)
	}
	if readFile(t, filepath.Join(tree, "sub/lib.py")) != "x = 1\n" {
		t.Fatal("apply wrote sub/lib.py although it stopped on a conflict")
	}
	_, diffErr, _ := o.jail(tree, "diff", id)
	if !strings.Contains(diffErr, "conflict main.py") {
		t.Errorf("jail diff does not mention the conflict: %s", diffErr)
	}
	if _, errOut, code := o.jail(filepath.Join(tree, "sub"), "apply", id, "lib.py"); code != 0 {
		t.Fatalf("jail apply ID lib.py from sub/: exit %d: %s", code, errOut)
	}
	if readFile(t, filepath.Join(tree, "sub/lib.py")) != "x = 1\nsandbox\n" || readFile(t, filepath.Join(tree, "main.py")) != "the user's edit\n" {
		t.Fatal("the partial apply wrote the wrong files")
	}
	// Without an ID, a path only the change set has: the newest change set of this tree.
	if _, errOut, code := o.jail(tree, "apply", "newdir"); code != 0 || readFile(t, filepath.Join(tree, "newdir/x")) != "n\n" {
		t.Fatalf("jail apply newdir: exit %d: %s", code, errOut)
	}
	if _, errOut, code := o.jail(tree, "apply", "--overwrite"); code != 0 {
		t.Fatalf("jail apply --overwrite (the newest change set): exit %d: %s", code, errOut)
	}
	if got := readFile(t, filepath.Join(tree, "main.py")); got != "print('hi')\nsandbox\n" {
		t.Errorf("main.py after --overwrite: %q", got)
	}
}

// TestWorkspaceBadInput: an unknown ID, a path outside the tree and a tampered change set each
// get one jail: line and exit 125, and nothing is lost.
func TestWorkspaceBadInput(t *testing.T) {
	o := newOverlayRun(t)
	tree := committed(t)
	id := o.run(tree, "echo changed >> main.py")
	before := treeState(t, tree)
	expect := func(args []string, want string) {
		t.Helper()
		_, errOut, code := o.jail(tree, args...)
		if code != exitFailure || !strings.HasPrefix(errOut, "jail: ") || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, want) {
			t.Errorf("jail %q: exit %d, stderr %q; want 125 and one jail: line saying %q", args, code, errOut, want)
		}
	}
	expect([]string{"diff", "ffffffff"}, "no such change set")
	expect([]string{"apply", "ffffffff"}, "no such change set")
	expect([]string{"discard", "ffffffff"}, "no such change set")
	expect([]string{"apply", id, "/etc/passwd"}, "outside the change set's tree")
	expect([]string{"apply", id, "nothing-here.txt"}, "no change at nothing-here.txt")
	// Tampering: an overlayfs attribute jail's overlay never sets.
	upper := filepath.Join(o.state, "jail", "changes", id, "upper")
	if err := os.Mkdir(filepath.Join(upper, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	setRedirect := exec.Command("python3", "-c", "import os,sys; os.setxattr(sys.argv[1], 'user.overlay.redirect', b'/etc')", filepath.Join(upper, "sub"))
	if out, err := setRedirect.CombinedOutput(); err != nil {
		t.Fatalf("set the attribute: %v: %s", err, out)
	}
	expect([]string{"diff", id}, "is damaged")
	expect([]string{"apply", id}, "is damaged")
	if treeState(t, tree) != before {
		t.Error("the tree changed")
	}
	if _, err := os.Stat(filepath.Join(upper, "main.py")); err != nil {
		t.Errorf("the change set lost its change: %v", err)
	}
	if _, errOut, code := o.jail(tree, "discard", id); code != 0 {
		t.Errorf("jail discard of the damaged change set: exit %d: %s", code, errOut)
	}
}

// TestWorkspaceFailsClosed: where the overlay cannot be had (no user namespaces, so no mount
// namespace, even with the Landlock fallback allowed), the run fails with one line and the
// command writes nothing: no silent fallback to a writable bind.
func TestWorkspaceFailsClosed(t *testing.T) {
	requireNoUserNSSandbox(t)
	o := newOverlayRun(t)
	tree := committed(t)
	before := treeState(t, tree)
	_, errOut, code := runJailWith(t, runOpts{dir: tree, wrap: noUserNSPrefix, env: []string{"XDG_STATE_HOME=" + o.state}},
		"--workspace", "overlay", "--fallback", "landlock", "--allow-weaker", "--", "sh", "-c", "echo pwned > main.py")
	if code != exitFailure || !strings.Contains(errOut, "overlay workspace") || !strings.Contains(errOut, "needs a mount namespace") {
		t.Errorf("exit %d, stderr %q; want 125 naming the overlay's need", code, errOut)
	}
	if treeState(t, tree) != before {
		t.Error("the command wrote the tree")
	}
}

// TestWorkspaceInUse: a change set whose sandbox still runs cannot be applied or discarded.
func TestWorkspaceInUse(t *testing.T) {
	o := newOverlayRun(t)
	tree := committed(t)
	signal := t.TempDir()
	goFile := filepath.Join(signal, "go")
	// The command waits for the test's go-ahead, at most 30 s (a file in a read-only grant).
	script := "echo x > new.txt; i=0; while [ ! -e " + goFile + " ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done"
	cmd := exec.Command(jailBin, "--workspace", "overlay", "--ro", signal, "--", "sh", "-c", script)
	cmd.Dir, cmd.Env = tree, append(os.Environ(), "XDG_STATE_HOME="+o.state)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	release := func() { os.WriteFile(goFile, nil, 0o644) }
	defer cmd.Wait()
	defer release()
	var out string
	for range 200 { // until the change set is there (bounded: jail starts in milliseconds)
		if out, _, _ = o.jail(tree, "changes"); strings.Contains(out, "running") {
			break
		}
		exec.Command("sleep", "0.05").Run()
	}
	if !strings.Contains(out, "running") {
		t.Fatalf("jail changes during the run:\n%s", out)
	}
	for _, verb := range []string{"apply", "discard"} {
		if _, errOut, code := o.jail(tree, verb); code != exitFailure || !strings.Contains(errOut, "still running") {
			t.Errorf("jail %s during the run: exit %d: %s", verb, code, errOut)
		}
	}
	release()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the run: %v", err)
	}
	if _, errOut, code := o.jail(tree, "apply"); code != 0 || readFile(t, filepath.Join(tree, "new.txt")) != "x\n" {
		t.Errorf("jail apply after the run: exit %d: %s", code, errOut)
	}
}

// TestWorkspaceDryRunShowsTheOverlay: the overlay is a step of the plan.
func TestWorkspaceDryRunShowsTheOverlay(t *testing.T) {
	o := newOverlayRun(t)
	tree := committed(t)
	out, errOut, code := o.jail(tree, "--workspace", "overlay", "--dry-run", "--", "true")
	if code != 0 || !strings.Contains(out, `"kind": "overlay"`) || !strings.Contains(out, `"upper": "`+o.state) {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	if ents, _ := os.ReadDir(o.state); len(ents) != 0 {
		t.Errorf("a dry run made a change set: %v", ents)
	}
}

// TestWorkspaceWithCommitMode: git commit mode inside an overlay workspace. The commits come
// out at exit as refs/jail/RUN/… (commit mode's import: objects and refs only, git fsck finds
// the repository whole, the user's branch does not move), the work tree's changes wait in the
// change set, and apply writes them.
func TestWorkspaceWithCommitMode(t *testing.T) {
	o := newOverlayRun(t)
	tree := committed(t)
	head := strings.TrimSpace(gitOut(t, tree, "rev-parse", "HEAD"))
	id := o.run(tree, `set -e; echo more >> main.py; git add main.py
		git -c user.name=agent -c user.email=a@a commit -q -m "agent work"
		git checkout -q -b feature; echo f > f.txt; git add f.txt; git -c user.name=agent -c user.email=a@a commit -q -m feature`,
		"-p", "agent-commit")
	if id == "" {
		t.Fatal("no change set")
	}
	refs := strings.Fields(gitOut(t, tree, "for-each-ref", "--format=%(refname)", "refs/jail/"))
	subjects := map[string]string{}
	for _, ref := range refs {
		subjects[ref[strings.LastIndex(ref, "/")+1:]] = strings.TrimSpace(gitOut(t, tree, "log", "-1", "--format=%s", ref))
	}
	if subjects["feature"] != "feature" || !slices.Contains(slices.Collect(maps.Values(subjects)), "agent work") {
		t.Errorf("refs/jail after the run: %v (%v)", refs, subjects)
	}
	gitOut(t, tree, "fsck", "--strict", "--no-dangling")
	if got := strings.TrimSpace(gitOut(t, tree, "rev-parse", "HEAD")); got != head {
		t.Errorf("HEAD moved to %s", got)
	}
	if _, errOut, code := o.jail(tree, "apply", id); code != 0 {
		t.Fatalf("jail apply: exit %d: %s", code, errOut)
	}
	if readFile(t, filepath.Join(tree, "f.txt")) != "f\n" || readFile(t, filepath.Join(tree, "main.py")) != "print('hi')\nmore\n" {
		t.Error("the work tree's changes were not written")
	}
}

// gitOut runs git in dir and returns its output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v: %s", args, err, out)
	}
	return string(out)
}

// TestChangesHelp: each change-set subcommand answers -h with its usage and status 0.
func TestChangesHelp(t *testing.T) {
	for _, verb := range []string{"changes", "diff", "apply", "discard"} {
		out, errOut, code := runJail(t, verb, "-h")
		if code != 0 || !strings.Contains(out+errOut, "jail apply [ID|NAME] [PATH...]") {
			t.Errorf("jail %s -h: exit %d: %s%s", verb, code, out, errOut)
		}
	}
}

// TestWorkspaceThroughSymlinkedCwd: a run started through a symlink to the repository (issue
// 15's first escape, in bind mode) keeps the real tree byte-identical, and apply refuses the hook.
func TestWorkspaceThroughSymlinkedCwd(t *testing.T) {
	o := newOverlayRun(t)
	repo := committed(t)
	link, env := through(t, repo)
	marker := filepath.Join(t.TempDir(), "P")
	before := treeState(t, repo)
	script := `printf '#!/bin/sh\ntouch ` + marker + `\n' > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout; echo x > new.txt`
	env = append(env, "XDG_STATE_HOME="+o.state)
	_, errOut, code := runJailWith(t, runOpts{dir: link, env: env}, "-p", bareProfile(t), "--", "sh", "-c", script)
	if code == exitFailure {
		t.Fatalf("jail failed: %s", errOut)
	}
	if treeState(t, repo) != before {
		t.Fatal("the real tree changed")
	}
	hostGit("checkout", "-q", "HEAD")(t, repo, nil)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the host's git ran the planted hook")
	}
	_, errOut, code = runJailWith(t, runOpts{dir: link, env: env}, "apply")
	if code != exitRefused || !strings.Contains(errOut, "refused .git/hooks/post-checkout") {
		t.Errorf("jail apply: exit %d: %s", code, errOut)
	}
}
