package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/seccomp"
)

// The seccomp filter, seen from inside the agent profile: testdata/seccomp/probe attempts each
// blocked family and prints the errno it got; legitimate tools must keep working.

// buildProbe builds testdata/seccomp/probe into dir (the sandbox's working directory, so the
// command can run it as ./probe).
func buildProbe(t *testing.T, dir string) {
	t.Helper()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "probe"), "../../testdata/seccomp/probe")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build probe: %s\n%s", err, out)
	}
	// The tests also run as an ordinary user, who must be able to run the probe.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// probe runs ./probe with the attempts inside jail and returns attempt → result.
func probe(t *testing.T, dir string, jailArgs []string, attempts ...string) map[string]string {
	t.Helper()
	args := append(append([]string{}, jailArgs...), append([]string{"--", "./probe"}, attempts...)...)
	out, errOut, code := runJailIn(t, dir, "", args...)
	if code != 0 {
		t.Fatalf("jail %q: exit %d\nstdout %s\nstderr %s", args, code, out, errOut)
	}
	results := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, result, _ := strings.Cut(line, " ")
		results[name] = result
	}
	return results
}

// blocked are the attempts the default filter refuses with the policy's errno. Each names one
// family from the issue; "netlink-highbits" is socket(0xffffffff00000010, …), which a plain
// 64-bit rule lets through.
var blocked = []string{
	"unshare-user", "unshare-net", "clone-newuser", "setns",
	"io_uring_setup", "bpf", "keyctl", "add_key", "perf_event_open", "userfaultfd",
	"tiocsti", "tioclinux",
	"netlink-diag", "netlink-highbits", "packet", "vsock", "raw-inet", "socketpair-tipc",
	"ptrace-child", "process_vm_readv", "personality-aslr",
}

// stillAllowed are the attempts in the same families that must keep working.
var stillAllowed = []string{"netlink-route", "tcp", "unix", "personality-query"}

// markerProfile writes a profile extending agent whose denied calls fail with EHWPOISON, an
// errno no kernel path returns for these calls: getting it proves the filter answered (and not,
// say, a missing capability or a sysctl).
func markerProfile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "marker.toml")
	text := "extends = [\"agent\"]\n\n[syscalls]\nerrno = \"EHWPOISON\"\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSeccompBlocksKernelAttackSurface(t *testing.T) {
	dir := t.TempDir()
	buildProbe(t, dir)
	attempts := append(append([]string{"clone3", "i386", "x32"}, blocked...), stillAllowed...)
	for _, tc := range []struct {
		name     string
		jailArgs []string
		errno    string
	}{
		{"agent", nil, "EPERM"},
		{"marker errno", []string{"-p", markerProfile(t)}, "EHWPOISON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := probe(t, dir, tc.jailArgs, attempts...)
			for _, name := range blocked {
				if got[name] != tc.errno {
					t.Errorf("%s: got %q, want %s", name, got[name], tc.errno)
				}
			}
			for _, name := range stillAllowed {
				if got[name] != "ok" {
					t.Errorf("%s: got %q, want ok", name, got[name])
				}
			}
			if got["clone3"] != "ENOSYS" {
				t.Errorf("clone3: got %q, want ENOSYS (so libc falls back to clone)", got["clone3"])
			}
			for _, name := range []string{"i386", "x32"} {
				if got[name] != "killed:SIGSYS" {
					t.Errorf("%s syscall: got %q, want the process killed by SIGSYS", name, got[name])
				}
			}
		})
	}
}

func TestSeccompUnshareCommandRefused(t *testing.T) {
	for _, script := range []string{"unshare -U true", "unshare -Ur true", "unshare -n true"} {
		out, errOut, code := runJail(t, "--", "sh", "-c", script)
		if code == 0 || !strings.Contains(errOut, "Operation not permitted") {
			t.Errorf("%q inside the sandbox: exit %d, out %q, err %q; want EPERM", script, code, out, errOut)
		}
	}
}

// jailSh runs a shell script inside the agent profile in dir and fails t unless it exits 0.
func jailSh(t *testing.T, dir, script string, jailArgs ...string) string {
	t.Helper()
	args := append(append([]string{}, jailArgs...), "--", "sh", "-c", script)
	out, errOut, code := runJailIn(t, dir, "", args...)
	if code != 0 {
		t.Fatalf("%q inside the sandbox: exit %d\nstdout %s\nstderr %s", script, code, out, errOut)
	}
	return out
}

// writeTree writes files (path relative to dir → text) and makes dir usable by any user.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSeccompPythonThreadsSubprocessMultiprocessing(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"work.py": `import multiprocessing, subprocess, threading

def square(x):
    return x * x

if __name__ == "__main__":
    seen = []
    threads = [threading.Thread(target=seen.append, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(seen) == list(range(8)), seen
    out = subprocess.run(["sh", "-c", "echo child"], capture_output=True, text=True, check=True)
    assert out.stdout == "child\n", out
    for method in ("fork", "spawn", "forkserver"):
        with multiprocessing.get_context(method).Pool(3) as pool:
            assert pool.map(square, range(10)) == [x * x for x in range(10)], method
    print("python ok")
`})
	if out := jailSh(t, dir, "python3 work.py"); out != "python ok\n" {
		t.Fatalf("got %q", out)
	}
}

func TestSeccompGit(t *testing.T) {
	dir := t.TempDir()
	script := `set -e
git init -q
echo one > a.txt
git add a.txt
git -c user.email=a@b.c -c user.name=agent commit -qm one
git checkout -qb topic
echo two >> a.txt
git -c user.email=a@b.c -c user.name=agent commit -qam two
git checkout -q -
git -c user.email=a@b.c -c user.name=agent merge -q topic
git gc -q
git log --oneline | wc -l`
	if out := jailSh(t, dir, script); out != "2\n" {
		t.Fatalf("got %q", out)
	}
}

// goToolchain returns the go command and its GOROOT (to grant inside), or skips t.
func goToolchain(t *testing.T) (goBin, goroot string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain on PATH")
	}
	out, err := exec.Command(goBin, "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	return goBin, strings.TrimSpace(string(out))
}

func TestSeccompGoTestWithGoroutines(t *testing.T) {
	goBin, goroot := goToolchain(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"go.mod": "module example.com/par\n\ngo 1.22\n",
		"par.go": `package par

import "sync"

// Sum adds the numbers in parallel.
func Sum(xs []int) int {
	var mu sync.Mutex
	var wg sync.WaitGroup
	total := 0
	for _, x := range xs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			total += x
			mu.Unlock()
		}()
	}
	wg.Wait()
	return total
}
`,
		"par_test.go": `package par

import (
	"net"
	"os/exec"
	"testing"
)

func TestSum(t *testing.T) {
	t.Parallel()
	if got := Sum([]int{1, 2, 3, 4}); got != 10 {
		t.Fatal(got)
	}
}

func TestSubprocessAndListen(t *testing.T) {
	t.Parallel()
	if out, err := exec.Command("sh", "-c", "echo hi").Output(); err != nil || string(out) != "hi\n" {
		t.Fatal(out, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0") // MPTCP first since Go 1.24, TCP as fallback
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
}
`,
	})
	env := []string{
		"PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin",
		"GOCACHE=" + filepath.Join(dir, ".cache/go-build"),
		"GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "CGO_ENABLED=0",
	}
	// Compiling the standard library cold takes most of a minute; warm the cache on the host,
	// then change the package so the sandbox still compiles, links and runs it.
	warm := exec.Command(goBin, "test", "-count=1", "-run", "^$", "./...")
	warm.Dir, warm.Env = dir, append(os.Environ(), env...)
	if out, err := warm.CombinedOutput(); err != nil {
		t.Fatalf("warm the build cache: %s\n%s", err, out)
	}
	writeTree(t, dir, map[string]string{"doc.go": "// Package par sums in parallel.\npackage par\n"})
	args := []string{"--ro", goroot}
	for _, e := range env {
		args = append(args, "--env", e)
	}
	out := jailSh(t, dir, "go build ./... && go test -count=1 -cpu 1,4 ./...", args...)
	if !strings.HasPrefix(out, "ok") {
		t.Fatalf("got %q", out)
	}
}

func TestSeccompGccMake(t *testing.T) {
	for _, tool := range []string{"gcc", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"Makefile": "threads: threads.c\n\tgcc -O2 -pthread -o $@ $<\n",
		"threads.c": `#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>

static void *work(void *arg) { return arg; }

int main(void) {
	pthread_t th[4];
	for (long i = 0; i < 4; i++) pthread_create(&th[i], NULL, work, (void *)i);
	long sum = 0;
	for (int i = 0; i < 4; i++) { void *r; pthread_join(th[i], &r); sum += (long)r; }
	pid_t pid = fork();
	if (pid == 0) _exit(7);
	int status;
	waitpid(pid, &status, 0);
	printf("%ld %d\n", sum, WEXITSTATUS(status));
	return 0;
}
`,
	})
	if out := jailSh(t, dir, "make -s && ./threads"); out != "6 7\n" {
		t.Fatalf("got %q", out)
	}
}

func TestSeccompNode(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node")
	}
	script := `node -e '
const { Worker } = require("worker_threads");
const { execFileSync } = require("child_process");
const w = new Worker("require(\"worker_threads\").parentPort.postMessage(6*7)", { eval: true });
w.on("message", (m) => {
  const out = execFileSync("sh", ["-c", "echo child"]).toString();
  console.log(m, out.trim());
});'`
	if out := jailSh(t, t.TempDir(), script); out != "42 child\n" {
		t.Fatalf("got %q", out)
	}
}

func TestSeccompCurlLoopbackWithHostNetwork(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello from the host")
	}))
	defer srv.Close()
	out := jailSh(t, t.TempDir(), "curl -sS --max-time 10 "+srv.URL+"/", "--net", "host")
	if out != "hello from the host" {
		t.Fatalf("got %q", out)
	}
}

// `jail seccomp export` writes the program bwrap takes with --seccomp: the same refusals there.
func TestSeccompExportForBwrap(t *testing.T) {
	out, errOut, code := runJail(t, "seccomp", "export", "-p", "agent")
	if code != 0 || len(out) == 0 || len(out)%8 != 0 {
		t.Fatalf("export: exit %d, %d bytes (want a multiple of 8), stderr %q", code, len(out), errOut)
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("no bwrap to load the exported program")
	}
	dir := t.TempDir()
	buildProbe(t, dir)
	bpf := filepath.Join(dir, "agent.bpf")
	if err := os.WriteFile(bpf, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(bpf)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(bwrap, "--dev-bind", "/", "/", "--seccomp", "3", "--", filepath.Join(dir, "probe"), "bpf", "netlink-highbits", "clone3", "tcp")
	cmd.ExtraFiles = []*os.File{f}
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bwrap --seccomp: %s\n%s", err, got)
	}
	if want := "bpf EPERM\nnetlink-highbits EPERM\nclone3 ENOSYS\ntcp ok\n"; string(got) != want {
		t.Errorf("under bwrap with the exported program: got %q, want %q", got, want)
	}
}

// TIOCSTI on the terminal jail was started from (under script(1), standard input is a
// terminal): pushing keystrokes into the user's shell must fail, and by the filter's hand.
func TestSeccompTIOCSTIOnCallersTerminal(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no script(1) to give jail a terminal")
	}
	dir := t.TempDir()
	buildProbe(t, dir)
	for profile, want := range map[string]string{"agent": "EPERM", markerProfile(t): "EHWPOISON"} {
		line := strings.Join([]string{jailBin, "-p", profile, "--", "./probe", "tiocsti-stdin"}, " ")
		cmd := exec.Command(script, "-qec", line, "/dev/null")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("script -c %q: %s\n%s", line, err, out)
		}
		if !strings.Contains(string(out), "tiocsti-stdin "+want) {
			t.Errorf("-p %s: TIOCSTI on the caller's terminal: got %q, want %s", profile, out, want)
		}
	}
}

// NETLINK_ROUTE stays open for read-only tools (ip, getaddrinfo with AI_ADDRCONFIG).
func TestSeccompIPAddr(t *testing.T) {
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip(8)")
	}
	if out := jailSh(t, t.TempDir(), "ip -o -4 addr show lo"); !strings.Contains(out, "127.0.0.1/8") {
		t.Fatalf("got %q", out)
	}
}

// The allow-list mode through the whole launcher: every known syscall but uname, personality
// and clone3 allowed. The command (and init's fork+exec before it) runs; uname and personality
// fail with EPERM, clone3 with ENOSYS, and the argument checks still hold on what is allowed.
func TestSeccompAllowList(t *testing.T) {
	var allow []string
	for _, name := range seccomp.Names() {
		if name != "uname" && name != "personality" && name != "clone3" {
			allow = append(allow, fmt.Sprintf("%q", name))
		}
	}
	path := filepath.Join(t.TempDir(), "allowlist.toml")
	text := "extends = [\"agent\"]\n\n[syscalls]\ndefault = \"deny\"\nallow = [" + strings.Join(allow, ", ") + "]\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	buildProbe(t, dir)
	got := probe(t, dir, []string{"-p", path}, "personality-query", "clone3", "unshare-user", "netlink-diag", "tcp")
	want := map[string]string{"personality-query": "EPERM", "clone3": "ENOSYS", "unshare-user": "EPERM", "netlink-diag": "EPERM", "tcp": "ok"}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: got %q, want %s", name, got[name], w)
		}
	}
	out, errOut, code := runJailIn(t, dir, "", "-p", path, "--", "sh", "-c", "echo hi; uname -s")
	if out != "hi\n" || code == 0 || !strings.Contains(errOut, "Operation not permitted") {
		t.Errorf("echo hi; uname -s: exit %d, out %q, err %q; want hi, then uname refused", code, out, errOut)
	}
}
