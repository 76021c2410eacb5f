package main

import (
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/internal/testutil"
)

// Attacks on persistent sandboxes, each checked by its effect, with a control that shows the
// same attempt succeeds where nothing stops it.

// TestPolicyFixedAtCreate: no request widens what create granted. PATCH refuses every field but
// timers and labels; exec takes no grant, network or profile (flag or field); the sandbox still
// refuses what it refused.
func TestPolicyFixedAtCreate(t *testing.T) {
	proj := t.TempDir()
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	testutil.WriteFile(t, victim, "original\n")
	id := createSandbox(t, proj)
	c := apiClient(filepath.Join(sandboxDir(id), "api.sock"))
	for _, body := range []string{
		`{"profile":"permissive"}`, `{"grants":{"write":["` + outside + `"]}}`, `{"network":{"mode":"host"}}`,
		`{"env":{"X":"1"}}`, `{"syscalls":{"default":"off"}}`,
	} {
		status, answer := call(t, c, "PATCH", "/v1/sandboxes/"+id, body, nil)
		if status != 400 || !strings.Contains(string(answer), "the policy is fixed at create") {
			t.Errorf("PATCH %s: %d %s; want 400, the policy is fixed", body, status, answer)
		}
	}
	for _, body := range []string{
		`{"cmd":["true"],"grants":{"write":["/"]}}`, `{"cmd":["true"],"network":{"mode":"host"}}`, `{"cmd":["true"],"profile":"x"}`,
	} {
		if status, answer := call(t, c, "POST", "/v1/sandboxes/"+id+"/exec", body, nil); status != 400 || errorCode(answer) != api.InvalidArgument {
			t.Errorf("exec %s: %d %s; want 400", body, status, answer)
		}
	}
	for _, flag := range []string{"--rw", "--net", "-p", "--allow-host"} {
		if _, errOut, code := runJail(t, "exec", flag, outside, id, "--", "true"); code != 125 || !strings.Contains(errOut, "unknown option") {
			t.Errorf("exec %s: exit %d, %s; want the flag refused", flag, code, errOut)
		}
	}
	// After all that, the sandbox refuses what it refused at create.
	execIn(t, id, "", "sh", "-c", "echo pwned > "+victim+"; echo x > /etc/jail-pwned")
	if out := mustExec(t, id, "grep -E '^(Seccomp|NoNewPrivs|CapEff):' /proc/self/status | tr -d ' \t'"); out != "CapEff:0000000000000000\nNoNewPrivs:1\nSeccomp:2\n" {
		t.Errorf("a command's restrictions after the attempts: %q", out)
	}
	status, answer := call(t, c, "PUT", "/v1/sandboxes/"+id+"/fs/file?path=/etc/jail-pwned", "x", nil)
	if status != 403 || errorCode(answer) != api.PermissionDenied {
		t.Errorf("PUT fs/file /etc/jail-pwned: %d %s; want 403", status, answer)
	}
	if got := readFile(t, victim); got != "original\n" {
		t.Errorf("victim changed: %q", got)
	}
	if _, err := os.Stat("/etc/jail-pwned"); err == nil {
		t.Error("/etc/jail-pwned was created on the host")
	}
}

// TestControlSocketsUnreachableFromSandboxes: a command in a sandbox whose grants include jail's
// runtime directory (a one-shot run's; create refuses such a grant) finds the sockets there and
// connects, but no keeper or server answers it: they refuse every peer outside their own user
// namespace. The same client outside any sandbox gets its answers.
func TestControlSocketsUnreachableFromSandboxes(t *testing.T) {
	id := createSandbox(t, t.TempDir())
	daemon := startServe(t)
	probe := filepath.Join(t.TempDir(), "probe.py")
	testutil.WriteFile(t, probe, `import socket, struct, sys
def ask(path, kind, msg):
    s = socket.socket(socket.AF_UNIX, kind)
    s.settimeout(5)
    try:
        s.connect(path)
        s.send(msg)
        return "answered" if s.recv(65536) else "refused"
    except OSError as e:
        return "refused"
http = b"GET /v1/version HTTP/1.1\r\nHost: x\r\n\r\n"
lst = struct.pack("=IIiiIIHHIqq", ord("L"), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
print(ask(sys.argv[1], socket.SOCK_STREAM, http), ask(sys.argv[2], socket.SOCK_SEQPACKET, lst), ask(sys.argv[3], socket.SOCK_STREAM, http))
`)
	os.Chmod(filepath.Dir(probe), 0o755)
	args := []string{filepath.Join(sandboxDir(id), "api.sock"), filepath.Join(sandboxDir(id), "ctl.sock"), daemon}
	out, err := exec.Command("python3", append([]string{probe}, args...)...).CombinedOutput()
	if strings.TrimSpace(string(out)) != "answered answered answered" {
		t.Fatalf("the control, outside any sandbox: %q (%v); want every socket to answer", out, err)
	}
	runArgs := append([]string{"--rw", runtimeDir, "--ro", filepath.Dir(probe), "--", "python3", probe}, args...)
	out2, errOut, code := runJail(t, runArgs...)
	if code != 0 || strings.TrimSpace(out2) != "refused refused refused" {
		t.Errorf("from inside a sandbox that sees the sockets: %q (exit %d, %s); want every one refused", out2, code, errOut)
	}
	// create refuses to show the runtime directory to a persistent sandbox at all.
	if _, errOut, code := runJail(t, "create", "--ro", filepath.Dir(runtimeDir)); code != 125 || !strings.Contains(errOut, "jail's runtime directory") {
		t.Errorf("create --ro %s: exit %d, %s; want it refused", filepath.Dir(runtimeDir), code, errOut)
	}
}

// startServe starts jail serve on a socket of the test's, until the test ends, and returns the
// socket's path once it answers.
func startServe(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(runtimeDir, "t"+strconv.Itoa(len(t.Name()))+".sock")
	cmd := exec.Command(jailBin, "serve", "--socket", sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); os.Remove(sock) })
	c := apiClient(sock)
	eventually(t, "jail serve answers", func() bool {
		resp, err := c.Get("http://jail/v1/version")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	return sock
}

// TestFileOpsDoNotFollowPlantedSymlinks: symlinks a command plants towards host paths outside its
// grants lead, for every file operation, where they lead inside the sandbox, and a copy out of
// the sandbox writes them as symlinks, never through them. The control reads the host file
// through the same link outside the sandbox.
func TestFileOpsDoNotFollowPlantedSymlinks(t *testing.T) {
	proj, secretDir := t.TempDir(), t.TempDir()
	secret := filepath.Join(secretDir, "secret")
	testutil.WriteFile(t, secret, "host secret\n")
	id := createSandbox(t, proj)
	mustExec(t, id, "ln -s "+secret+" link && mkdir -p /tmp/d && ln -s "+secretDir+" /tmp/d/dir && ln -s "+secret+" /tmp/d/file")
	if b, err := os.ReadFile(filepath.Join(proj, "link")); err != nil || string(b) != "host secret\n" {
		t.Fatalf("the control: the link, outside the sandbox, reads %q (%v)", b, err)
	}
	c := apiClient(filepath.Join(sandboxDir(id), "api.sock"))
	base := "/v1/sandboxes/" + id + "/fs/"
	if status, body := call(t, c, "GET", base+"file?path=link", nil, nil); status != 404 || strings.Contains(string(body), "host secret") {
		t.Errorf("GET fs/file through a planted link: %d %q; want 404", status, body)
	}
	for _, path := range []string{"/tmp/d/file", "/tmp/d/dir/new"} { // through a link; beneath one
		if status, body := call(t, c, "PUT", base+"file?path="+path, "planted\n", nil); status < 400 || status >= 500 {
			t.Errorf("PUT fs/file %s: %d %q; want it refused", path, status, body)
		}
	}
	var list api.FileList
	call(t, c, "GET", base+"list?path=/tmp/d", nil, &list)
	for _, e := range list.Entries {
		if e.Type != "symlink" {
			t.Errorf("list: %s is a %s, want the symlink itself", e.Path, e.Type)
		}
	}
	dest := t.TempDir()
	if _, errOut, code := runJail(t, "cp", id+":/tmp/d", dest); code != 0 {
		t.Fatalf("cp out: exit %d, %s", code, errOut)
	}
	if fi, err := os.Lstat(filepath.Join(dest, "d", "file")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("cp out: d/file is %v (%v), want a symlink", fi, err)
	}
	if got := readFile(t, secret); got != "host secret\n" {
		t.Errorf("the host's secret changed: %q", got)
	}
	if _, err := os.Stat(filepath.Join(secretDir, "new")); err == nil {
		t.Error("a file was planted in the host's directory")
	}
}

// TestOtherUsersCannotReachASandbox: another user can neither list, exec into, copy from nor
// remove a sandbox: jail refuses a runtime directory that is not theirs; the directory (0700)
// refuses them its sockets; and with the directory opened to them, the keeper refuses their
// connections (SO_PEERCRED), and so does jail serve. Run as root, as jailtest against root's
// sandbox and as a second test user against jailtest's; the control is the owner's own access.
func TestOtherUsersCannotReachASandbox(t *testing.T) {
	if !isRoot() {
		t.Skip("acting as other users needs root; the root run covers it")
	}
	other := testUser(t, "jailtest")
	second := testUser(t, "jailtest2")
	t.Run("root's sandbox, jailtest", func(t *testing.T) {
		id := createSandbox(t, t.TempDir())
		othersCannotReach(t, id, runtimeDir, other)
	})
	t.Run("jailtest's sandbox, jailtest2", func(t *testing.T) {
		dir := filepath.Join(os.TempDir(), "jr-"+other.Username)
		os.RemoveAll(dir)
		os.RemoveAll(dir + "-cache")
		t.Cleanup(func() { asUser(other, dir, "", "prune"); os.RemoveAll(dir); os.RemoveAll(dir + "-cache") })
		work, err := os.MkdirTemp("", "jw")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(work) })
		os.Chmod(work, 0o777)
		out, err := asUser(other, dir, work, "create")
		id := strings.TrimSpace(out)
		if err != nil || !strings.HasPrefix(id, "jb_") {
			t.Fatalf("jail create as %s: %q, %v", other.Username, out, err)
		}
		t.Cleanup(func() { asUser(other, dir, "", "rm", "-f", id) })
		othersCannotReach(t, id, dir, second)
	})
}

// othersCannotReach checks user u cannot reach sandbox id, whose runtime directory is dir.
func othersCannotReach(t *testing.T, id, dir string, u *user.User) {
	t.Helper()
	owner := ""
	if st, err := os.Stat(dir); err == nil {
		owner = strconv.Itoa(int(st.Sys().(*syscall.Stat_t).Uid))
	}
	for _, args := range [][]string{{"ls"}, {"exec", id, "--", "true"}, {"cp", id + ":/etc/hostname", "-"}, {"rm", "-f", id}, {"inspect", id}} {
		out, err := asUser(u, dir, "", args...)
		if err == nil || strings.Contains(out, id) && args[0] == "ls" {
			t.Errorf("jail %s as %s with the owner's runtime directory: %q, %v; want it refused", strings.Join(args, " "), u.Username, out, err)
		}
	}
	api := filepath.Join(dir, id, "api.sock")
	curl := func() string {
		out, _ := exec.Command("runuser", "-u", u.Username, "--", "curl", "-sS", "-m", "5", "--unix-socket", api, "http://x/v1/version").CombinedOutput()
		return string(out)
	}
	if out := curl(); strings.Contains(out, `"api"`) {
		t.Errorf("%s reached %s through a private directory: %s", u.Username, api, out)
	}
	// Open the directories: the keeper itself must refuse the peer.
	for _, d := range []string{dir, filepath.Join(dir, id)} {
		st, _ := os.Stat(d)
		os.Chmod(d, 0o755)
		defer os.Chmod(d, st.Mode().Perm())
	}
	os.Chmod(api, 0o777)
	if out := curl(); strings.Contains(out, `"api"`) {
		t.Errorf("%s (not uid %s) got an answer from the sandbox's keeper: %s", u.Username, owner, out)
	}
	// The owner still reaches it: the control.
	if owner == "0" {
		if status, _ := call(t, apiClient(api), "GET", "/v1/version", nil, nil); status != 200 {
			t.Errorf("the owner's own request: %d", status)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, id)); err != nil {
		t.Errorf("the sandbox is gone after %s's attempts: %v", u.Username, err)
	}
}

// testUser returns user name, creating it (without a home) if it does not exist.
func testUser(t *testing.T, name string) *user.User {
	t.Helper()
	if u, err := user.Lookup(name); err == nil {
		return u
	}
	if out, err := exec.Command("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %s: %s", name, err, out)
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// asUser runs jail ARGS as user u, with JAIL_RUNTIME_DIR=rundir, in dir (when not empty).
func asUser(u *user.User, rundir, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// the caches (the default profile's) next to the runtime directory, rundir+"-cache"
	argv := append([]string{"-u", u.Username, "--", "env", "JAIL_RUNTIME_DIR=" + rundir, "XDG_CACHE_HOME=" + rundir + "-cache", "HOME=/", jailBin}, args...)
	cmd := exec.CommandContext(ctx, "runuser", argv...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}
