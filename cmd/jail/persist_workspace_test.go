package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/jail-sandbox/jail/api"
)

// A persistent sandbox with the overlay workspace (jail create --workspace overlay): its change
// set has the sandbox's id, every exec writes it, and diff, apply and discard take the sandbox's
// id or name, on the command line and over HTTP, while it lives and after jail rm.

// sandbox creates a sandbox in dir with the test's change-set store and args, and returns
// its id; it is removed when the test ends.
func (o *overlayRun) sandbox(dir string, args ...string) string {
	o.t.Helper()
	out, errOut, code := o.jail(dir, append([]string{"create"}, args...)...)
	id := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(id, "jb_") {
		o.t.Fatalf("jail create %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	o.t.Cleanup(func() { o.jail(dir, "rm", "-f", id) })
	return id
}

// exec runs script in sandbox id, which must succeed, and returns its output.
func (o *overlayRun) exec(id, script string) string {
	o.t.Helper()
	out, errOut, code := o.jail(o.t.TempDir(), "exec", id, "--", "sh", "-c", script)
	if code != 0 {
		o.t.Fatalf("jail exec %s -- sh -c %q: exit %d: %s", id, script, code, errOut)
	}
	return out
}

// TestSandboxWorkspace: every exec of a sandbox sees the overlay its earlier ones wrote, the
// tree never changes under it; apply writes the tree while the sandbox lives (which goes on
// seeing the same files), discard of a live sandbox's change set is refused and loses nothing,
// rm keeps the change set, and after it diff and apply take the sandbox's name.
func TestSandboxWorkspace(t *testing.T) {
	o := newOverlayRun(t)
	repo := committed(t)
	before := treeState(t, repo)
	id := o.sandbox(repo, "--workspace", "overlay", "--name", "ws1")
	o.exec("ws1", "echo 'print(2)' > main.py && echo new > new.txt && rm sub/lib.py")
	if got := o.exec(id, "cat main.py new.txt; ls sub"); got != "print(2)\nnew\n" {
		t.Errorf("a later exec sees %q, want the earlier one's writes", got)
	}
	if treeState(t, repo) != before {
		t.Fatal("the tree changed while the sandbox wrote it")
	}
	out, _, _ := o.jail(repo, "changes")
	if !strings.Contains(out, id) || !strings.Contains(out, "sandbox ws1") || !strings.Contains(out, "running") {
		t.Errorf("jail changes does not list the live sandbox's change set by name:\n%s", out)
	}
	diff, errOut, code := o.jail(repo, "diff", "ws1")
	if code != 0 || !strings.Contains(diff, "+print(2)") || !strings.Contains(diff, "deleted file mode") || !strings.Contains(diff, "b/new.txt") {
		t.Fatalf("jail diff ws1: exit %d, %s\n%s", code, errOut, diff)
	}

	// Live: apply one path; the sandbox sees what it saw.
	if _, errOut, code := o.jail(repo, "apply", "ws1", "new.txt"); code != 0 {
		t.Fatalf("jail apply ws1 new.txt while it lives: exit %d: %s", code, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "new.txt")); string(b) != "new\n" {
		t.Errorf("new.txt in the tree after apply: %q", b)
	}
	if got := o.exec(id, "cat new.txt main.py"); got != "new\nprint(2)\n" {
		t.Errorf("the sandbox after apply sees %q", got)
	}
	// Live: discard is refused, nothing lost.
	if _, errOut, code := o.jail(repo, "discard", "ws1"); code != exitFailure || !strings.Contains(errOut, "live sandbox") {
		t.Errorf("jail discard of a live sandbox's change set: exit %d, %s; want %d naming it live", code, errOut, exitFailure)
	}
	if d, _, _ := o.jail(repo, "diff", "ws1"); !strings.Contains(d, "+print(2)") {
		t.Errorf("a refused discard lost changes:\n%s", d)
	}

	// rm keeps the change set; diff and apply take the name after it.
	_, errOut, code = o.jail(repo, "rm", "ws1")
	if code != 0 || !strings.Contains(errOut, "2 changes of sandbox ws1 wait") {
		t.Fatalf("jail rm ws1: exit %d: %q", code, errOut)
	}
	out, _, _ = o.jail(repo, "changes")
	if !strings.Contains(out, "removed") || !strings.Contains(out, "sandbox ws1") {
		t.Errorf("jail changes after rm:\n%s", out)
	}
	if _, errOut, code := o.jail(repo, "apply", "ws1"); code != 0 {
		t.Fatalf("jail apply ws1 after rm: exit %d: %s", code, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "main.py")); string(b) != "print(2)\n" {
		t.Errorf("main.py after apply: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(repo, "sub", "lib.py")); !os.IsNotExist(err) {
		t.Errorf("sub/lib.py after apply: %v, want it deleted", err)
	}
	if _, err := os.Stat(filepath.Join(o.state, "jail", "changes", id)); !os.IsNotExist(err) {
		t.Errorf("the change set applied in full after rm is still there: %v", err)
	}

	// A sandbox that wrote nothing leaves no change set at rm.
	id2 := o.sandbox(repo, "--workspace", "overlay")
	o.jail(repo, "rm", id2)
	if _, err := os.Stat(filepath.Join(o.state, "jail", "changes", id2)); !os.IsNotExist(err) {
		t.Errorf("an unused sandbox's change set outlived rm: %v", err)
	}
}

// TestSandboxWorkspaceProfileKey: the profile's workspace = "overlay" gives create an overlay
// too, and jail discard after rm removes it, the tree untouched.
func TestSandboxWorkspaceProfileKey(t *testing.T) {
	o := newOverlayRun(t)
	repo := committed(t)
	before := treeState(t, repo)
	id := o.sandbox(repo, "-p", bareProfile(t))
	o.exec(id, "echo x >> main.py")
	o.jail(repo, "rm", id)
	if _, errOut, code := o.jail(repo, "discard", id); code != 0 {
		t.Fatalf("jail discard after rm: exit %d: %s", code, errOut)
	}
	if treeState(t, repo) != before {
		t.Error("the tree changed")
	}
	if _, _, code := o.jail(repo, "diff", id); code != exitFailure {
		t.Errorf("jail diff of a discarded change set: exit %d", code)
	}
}

// TestSandboxWorkspaceAPI: the change-set routes on the sandbox's socket: list, diff, apply
// (refusals with 409 and nothing written), bad input (4xx, nothing lost), discard refused while
// it lives; after rm, jail serve's socket answers them.
func TestSandboxWorkspaceAPI(t *testing.T) {
	o := newOverlayRun(t)
	repo := committed(t)
	id := o.sandbox(repo, "-p", bareProfile(t), "--name", "ws2")
	c := apiClient(filepath.Join(sandboxDir(id), "api.sock"))
	sb := "/v1/sandboxes/ws2/changes"
	var info api.Sandbox
	if status, body := call(t, c, "GET", "/v1/sandboxes/ws2", nil, &info); status != 200 || info.Workspace != "overlay" {
		t.Errorf("GET the sandbox: %d, workspace %q: %s", status, info.Workspace, body)
	}
	o.exec(id, "echo changed > main.py && echo 'curl x | sh' > .envrc")

	var cs api.ChangeSet
	if status, body := call(t, c, "GET", sb, nil, &cs); status != 200 || cs.ID != id || !cs.Live || len(cs.Changes) != 2 || cs.Tree != repo {
		t.Fatalf("GET changes: %d %s", status, body)
	}
	if status, body := call(t, c, "GET", sb+"/diff?path=main.py", nil, nil); status != 200 || !strings.Contains(string(body), "+changed") || strings.Contains(string(body), ".envrc") {
		t.Errorf("GET diff?path=main.py: %d %s", status, body)
	}
	for _, bad := range []struct {
		method, route string
		body          any
		status        int
	}{
		{"POST", sb + "/apply", api.ApplyRequest{Paths: []string{"/etc/passwd"}}, 400},
		{"POST", sb + "/apply", api.ApplyRequest{Paths: []string{"nothing-here"}}, 400},
		{"POST", sb + "/apply", api.ApplyRequest{Allow: []string{"everything"}}, 400},
		{"POST", sb + "/apply", `{"paths": ["main.py"], "force": true}`, 400},
		{"POST", sb + "/apply", "", 400},
		{"DELETE", sb, nil, 409},
		{"GET", "/v1/sandboxes/nosuch/changes", nil, 404},
		{"PUT", sb, nil, 501},
	} {
		if status, body := call(t, c, bad.method, bad.route, bad.body, nil); status != bad.status || errorCode(body) == "" {
			t.Errorf("%s %s %v: %d %s, want %d", bad.method, bad.route, bad.body, status, body, bad.status)
		}
	}
	// .envrc is refused: nothing written, the refusal named.
	var res api.ApplyResponse
	status, body := call(t, c, "POST", sb+"/apply", api.ApplyRequest{}, nil)
	if status != http.StatusConflict || errorCode(body) != api.FailedPrecondition || !strings.Contains(string(body), `"path":".envrc"`) || !strings.Contains(string(body), `"allow":"autorun"`) {
		t.Errorf("apply with .envrc: %d %s", status, body)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "main.py")); string(b) != "print('hi')\n" {
		t.Fatalf("a refused apply wrote main.py: %q", b)
	}
	if status, body := call(t, c, "POST", sb+"/apply", api.ApplyRequest{Paths: []string{filepath.Join(repo, "main.py")}}, &res); status != 200 || len(res.Written) != 1 || res.Removed {
		t.Errorf("apply main.py: %d %s", status, body)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "main.py")); string(b) != "changed\n" {
		t.Errorf("main.py after apply: %q", b)
	}

	// After rm, jail serve answers for the change set by the sandbox's name.
	o.jail(repo, "rm", "ws2")
	sock := filepath.Join(t.TempDir(), "s.sock")
	srv := exec.Command(jailBin, "serve", "--socket", sock)
	srv.Env = append(os.Environ(), "XDG_STATE_HOME="+o.state)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	eventually(t, "jail serve listens", func() bool { _, err := os.Stat(sock); return err == nil })
	c = apiClient(sock)
	if status, body := call(t, c, "GET", sb, nil, &cs); status != 200 || cs.Live || len(cs.Changes) != 1 {
		t.Errorf("GET changes after rm: %d %s", status, body)
	}
	if status, body := call(t, c, "DELETE", sb, nil, nil); status != 204 {
		t.Errorf("DELETE changes after rm: %d %s", status, body)
	}
	if status, body := call(t, c, "GET", sb, nil, nil); status != 404 {
		t.Errorf("GET changes after discard: %d %s", status, body)
	}
	if _, err := os.Lstat(filepath.Join(repo, ".envrc")); !os.IsNotExist(err) {
		t.Errorf(".envrc in the tree: %v", err)
	}
}

// TestSandboxWorkspaceAttacks: a persistent sandbox, under a profile with no protections, plants
// what the host's git runs (a hook, core.fsmonitor) and what a shell runs (.envrc), and a symlink
// out: the real tree stays byte-identical while it lives and after rm, the host's git runs no
// payload, and apply refuses each, naming the path, on the command line and over HTTP. Each
// attack works without jail (TestWorkspaceAttacks shows it).
func TestSandboxWorkspaceAttacks(t *testing.T) {
	bare := bareProfile(t)
	for _, a := range workspaceAttacks {
		if a.subdir != "" || a.refused == ".git" {
			continue // TestWorkspaceAttacks runs those
		}
		t.Run(a.name, func(t *testing.T) {
			o := newOverlayRun(t)
			marker := filepath.Join(t.TempDir(), "P")
			repo := committed(t)
			before := treeState(t, repo)
			id := o.sandbox(repo, "-p", bare, "--env", "P="+marker)
			o.exec(id, a.script)
			hostAction := func(when string) {
				t.Helper()
				if treeState(t, repo) != before {
					t.Fatalf("%s: the real tree changed", when)
				}
				if a.host != nil {
					hostGit(a.host...)(t, repo, nil)
				}
				if _, err := os.Stat(marker); err == nil {
					t.Fatalf("%s: the host ran the planted payload", when)
				}
			}
			hostAction("while the sandbox lives")
			if _, errOut, code := o.jail(repo, "apply", id); code != exitRefused || !strings.Contains(errOut, "refused "+a.refused) {
				t.Errorf("jail apply (live): exit %d, want %d refusing %s:\n%s", code, exitRefused, a.refused, errOut)
			}
			status, body := call(t, apiClient(filepath.Join(sandboxDir(id), "api.sock")), "POST", "/v1/sandboxes/"+id+"/changes/apply", api.ApplyRequest{}, nil)
			if status != http.StatusConflict || !strings.Contains(string(body), `"path":"`+a.refused) {
				t.Errorf("POST apply: %d %s, want 409 refusing %s", status, body, a.refused)
			}
			hostAction("after the refused applies")
			// rm -f (which C does without Go for other sandboxes) finishes the change set too.
			if _, errOut, _ := o.jail(repo, "rm", "-f", id); !strings.Contains(errOut, "wait in change set "+id) {
				t.Errorf("jail rm -f does not say what waits: %q", errOut)
			}
			if _, err := os.Lstat(filepath.Join(o.state, "jail", "changes", id, "work", "work")); !os.IsNotExist(err) {
				t.Errorf("jail rm -f left overlayfs's scratch directory: %v", err)
			}
			if _, errOut, code := o.jail(repo, "apply", id); code != exitRefused || !strings.Contains(errOut, "refused "+a.refused) {
				t.Errorf("jail apply after rm: exit %d:\n%s", code, errOut)
			}
			hostAction("after rm and apply")
		})
	}
}

// TestSandboxWorkspaceLockOutside: the change set's lock, which refuses discard while the
// sandbox lives, is held outside it. A command in the sandbox unlocks every descriptor it has
// (flock -u) and looks for the change set among every descriptor it can see; discard stays
// refused, the changes kept. The same look from the host finds the keeper's copy, so the look
// can fail.
func TestSandboxWorkspaceLockOutside(t *testing.T) {
	o := newOverlayRun(t)
	repo := committed(t)
	id := o.sandbox(repo, "--workspace", "overlay")
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(o.state, "jail", "changes", id), &st); err != nil {
		t.Fatal(err)
	}
	lock := fmt.Sprintf("%d:%d", st.Dev, st.Ino)
	seen := o.exec(id, `echo x > new.txt
for fd in /proc/self/fd/*; do flock -u "${fd##*/}" 2>/dev/null; done
stat -L -c '%d:%i' /proc/[0-9]*/fd/* 2>/dev/null; true`)
	if slices.Contains(strings.Fields(seen), lock) {
		t.Errorf("a process in the sandbox holds the change set's directory (%s) open", lock)
	}
	if _, errOut, code := o.jail(repo, "discard", id); code != exitFailure || !strings.Contains(errOut, "live sandbox") {
		t.Errorf("jail discard after the sandbox's unlocks: exit %d, %s; want %d naming it live", code, errOut, exitFailure)
	}
	if d, _, _ := o.jail(repo, "diff", id); !strings.Contains(d, "b/new.txt") {
		t.Errorf("the changes are gone:\n%s", d)
	}
	held := false
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		var s syscall.Stat_t
		if syscall.Stat(fd, &s) == nil && s.Dev == st.Dev && s.Ino == st.Ino {
			held = true
		}
	}
	if !held {
		t.Error("no process on the host holds the change set's directory open: the look inside proves nothing")
	}
}
