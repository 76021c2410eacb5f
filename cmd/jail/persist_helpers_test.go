package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/api"
)

// Persistent sandboxes in tests live in a runtime directory of the test binary's own
// (JAIL_RUNTIME_DIR, set in TestMain), short enough for socket paths, so that they never meet a
// user's sandboxes or another test run's.

// runtimeDir is that directory.
var runtimeDir string

// setRuntimeDir makes it; its removal is returned.
func setRuntimeDir() (func(), error) {
	dir, err := os.MkdirTemp("", "jr")
	if err != nil {
		return nil, err
	}
	runtimeDir = dir
	os.Setenv("JAIL_RUNTIME_DIR", dir)
	return func() {
		// Sandboxes a failed test left: removed, so that nothing outlives the run.
		out, _ := exec.Command(jailBin, "ls", "--json").Output()
		var list api.ListResponse
		if json.Unmarshal(out, &list) == nil {
			for _, sb := range list.Sandboxes {
				exec.Command(jailBin, "rm", "-f", sb.ID).Run()
			}
		}
		os.RemoveAll(dir)
	}, nil
}

// createSandbox runs `jail create ARGS` in dir and returns the new sandbox's id; the sandbox is
// removed when the test ends.
func createSandbox(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, errOut, code := runJailIn(t, dir, "", append([]string{"create"}, args...)...)
	id := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(id, "jb_") {
		t.Fatalf("jail create %s: exit %d, stdout %q, stderr %s", strings.Join(args, " "), code, out, errOut)
	}
	t.Cleanup(func() { exec.Command(jailBin, "rm", "-f", id).Run() })
	return id
}

// execIn runs `jail exec ID -- ARGV` with stdin (passed with -i when not empty).
func execIn(t *testing.T, id, stdin string, argv ...string) (stdout, stderr string, code int) {
	t.Helper()
	args := []string{"exec"}
	if stdin != "" {
		args = append(args, "-i")
	}
	return runJailIn(t, t.TempDir(), stdin, append(append(args, id, "--"), argv...)...)
}

// mustExec is execIn of a shell script that must succeed; it returns the output.
func mustExec(t *testing.T, id, script string) string {
	t.Helper()
	out, errOut, code := execIn(t, id, "", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("jail exec %s -- sh -c %q: exit %d: %s", id, script, code, errOut)
	}
	return out
}

// sandboxDir is a sandbox's state directory.
func sandboxDir(id string) string { return filepath.Join(runtimeDir, id) }

// sandboxPidNS is the pid namespace of sandbox id ("pid:[INODE]"), as its commands see it. The
// test holds it open to its end: a namespace freed gives its inode number back, and a sandbox
// created meanwhile, by this test or another running at the same time, could get it and pass
// for this one's processes still alive.
func sandboxPidNS(t *testing.T, id string) string {
	t.Helper()
	ns := strings.TrimSpace(mustExec(t, id, "readlink /proc/self/ns/pid"))
	if !strings.HasPrefix(ns, "pid:[") {
		t.Fatalf("sandbox %s: pid namespace %q", id, ns)
	}
	for _, pid := range processesIn(ns) {
		f, err := os.Open(fmt.Sprintf("/proc/%d/ns/pid", pid))
		if err != nil {
			continue
		}
		if link, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd())); link != ns {
			f.Close()
			continue
		}
		t.Cleanup(func() { f.Close() })
		return ns
	}
	t.Fatalf("sandbox %s: no process in its pid namespace %s to hold it by", id, ns)
	return ns
}

// processesIn returns the host pids of the live (not zombie) processes in pid namespace ns.
func processesIn(ns string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if link, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "pid")); err != nil || link != ns {
			continue
		}
		if !zombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// zombie reports whether process pid has ended (and waits to be reaped) or is gone.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X'
}

// keeperOf returns the pid of sandbox id's keeper: the process that holds its lock file open.
func keeperOf(t *testing.T, id string) int {
	t.Helper()
	lock := filepath.Join(sandboxDir(id), "lock")
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || zombie(pid) {
			continue
		}
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(comm)) != "jail-keeper" {
			continue
		}
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			if target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); target == lock {
				return pid
			}
		}
	}
	t.Fatalf("sandbox %s: no keeper holds %s", id, lock)
	return 0
}

// eventually waits up to 20 s for cond, checking it every 10 ms: a readiness check, not a
// timing assertion (the 20 s only bound a test that would otherwise hang).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still not so after 20 s: %s", what)
		}
	}
}

// hostMounts is the host's mount table as this process sees it, the lines that name jail's
// runtime directory or a temporary directory of the tests': what a sandbox could leave mounted
// on the host (other programs may mount and unmount elsewhere meanwhile).
func hostMounts(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var ours []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, runtimeDir) || strings.Contains(line, os.TempDir()+"/Test") {
			ours = append(ours, line)
		}
	}
	return strings.Join(ours, "\n")
}

// keeperTree returns sandbox id's keeper and its init: the processes of a sandbox that
// processesIn cannot find as an ordinary user (init was forked, not executed, so its memory
// belongs to the host's user namespace, and it is non-dumpable).
func keeperTree(t *testing.T, id string) []int {
	t.Helper()
	k := keeperOf(t, id)
	pids := []int{k}
	children, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", k, k))
	for _, c := range strings.Fields(string(children)) {
		if pid, err := strconv.Atoi(c); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// assertGone checks nothing of sandbox id is left: no process in its pid namespace ns, nor any of
// also (its keeper and init), no state directory (sockets, records, output), no name, and the
// host's mounts as they were.
func assertGone(t *testing.T, id, ns, name, mountsBefore string, also ...int) {
	t.Helper()
	if pids := processesIn(ns); len(pids) > 0 {
		t.Errorf("sandbox %s removed, but processes %v of its pid namespace live", id, pids)
	}
	for _, pid := range also {
		if !zombie(pid) {
			t.Errorf("sandbox %s removed, but its process %d lives", id, pid)
		}
	}
	if _, err := os.Lstat(sandboxDir(id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("sandbox %s removed, but its directory stays: %v", id, err)
	}
	if name != "" {
		if _, err := os.Lstat(filepath.Join(runtimeDir, "names", name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("sandbox %s removed, but its name %s stays", id, name)
		}
	}
	if after := hostMounts(t); after != mountsBefore {
		t.Errorf("the host's mounts changed:\nbefore:\n%s\nafter:\n%s", mountsBefore, after)
	}
	entries, _ := os.ReadDir(runtimeDir)
	for _, e := range entries {
		if strings.Contains(e.Name(), id) {
			t.Errorf("sandbox %s removed, but %s stays in the runtime directory", id, e.Name())
		}
	}
}

// apiClient is an HTTP client (Go's own, to test jail's server against a standard one) of the
// unix socket at path.
func apiClient(path string) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
	}, Timeout: time.Minute}
}

// call makes one API request and decodes a JSON answer into out (when not nil); it returns the
// status and the raw body.
func call(t *testing.T, c *http.Client, method, route string, body any, out any) (int, []byte) {
	t.Helper()
	var r *bytes.Reader
	switch b := body.(type) {
	case nil:
		r = bytes.NewReader(nil)
	case []byte:
		r = bytes.NewReader(b)
	case string:
		r = bytes.NewReader([]byte(b))
	default:
		j, _ := json.Marshal(b)
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, "http://jail"+route, r)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %s", method, route, err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(buf.Bytes(), out); err != nil {
			t.Fatalf("%s %s: answer %q: %s", method, route, buf.String(), err)
		}
	}
	return resp.StatusCode, buf.Bytes()
}

// errorCode is the code of an error answer.
func errorCode(body []byte) string {
	var e api.ErrorBody
	if json.Unmarshal(body, &e) != nil || e.Error == nil {
		return ""
	}
	return e.Error.Code
}

// stream decodes an NDJSON answer into events.
func stream(t *testing.T, body []byte) []api.Event {
	t.Helper()
	var events []api.Event
	for _, line := range bytes.Split(bytes.TrimSpace(body), []byte("\n")) {
		var e api.Event
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("stream line %q: %s", line, err)
		}
		events = append(events, e)
	}
	return events
}

// output joins a stream's stdout and stderr events, and returns its exit.
func output(events []api.Event) (stdout, stderr string, exit *api.Exit) {
	for _, e := range events {
		switch e.Event {
		case api.EventStdout:
			stdout += string(e.Data)
		case api.EventStderr:
			stderr += string(e.Data)
		case api.EventExit:
			exit = e.Exit
		}
	}
	return stdout, stderr, exit
}

// isRoot says the tests run as root, which they need to act as another user.
func isRoot() bool { return syscall.Geteuid() == 0 }
