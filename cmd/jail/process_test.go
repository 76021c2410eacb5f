package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/testutil"
)

func TestExitStatusIsTheCommands(t *testing.T) {
	for _, tc := range []struct {
		script string
		want   int
	}{
		{"exit 0", 0},
		{"exit 7", 7},
		{"kill -TERM $$", 128 + int(syscall.SIGTERM)},
		{"kill -KILL $$", 128 + int(syscall.SIGKILL)},
		{"kill -SEGV $$", 128 + int(syscall.SIGSEGV)},
	} {
		if _, errOut, code := runJail(t, "--", "sh", "-c", tc.script); code != tc.want {
			t.Errorf("%q: exit %d, want %d (%s)", tc.script, code, tc.want, errOut)
		}
	}
}

func TestCommandNotFoundOrNotExecutable(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFile(t, filepath.Join(dir, "notexec.sh"), "#!/bin/sh\necho hi\n")
	for _, tc := range []struct {
		cmd  string
		want int
	}{
		{"no-such-command-jail-test", 127},
		{"./no-such-file", 127},
		{"./notexec.sh", 126},
	} {
		_, errOut, code := runJailIn(t, dir, "", "--", tc.cmd)
		if code != tc.want || !strings.HasPrefix(errOut, "jail: ") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s: exit %d want %d, stderr %q (want one line starting jail:)", tc.cmd, code, tc.want, errOut)
		}
	}
}

func TestTimeoutKillsTheSandbox(t *testing.T) {
	start := time.Now()
	_, errOut, code := runJail(t, "--timeout", "1s", "--", "sh", "-c", "sleep 60 & sleep 60")
	if code != 124 || !strings.Contains(errOut, "timeout") {
		t.Fatalf("exit %d, stderr %q; want 124 and a message", code, errOut)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("took %s", d)
	}
}

// TestKilledJailTakesTheSandboxWithIt kills jail with SIGKILL — no chance to clean up — and
// checks that the sandboxed process is gone too: with "--", whose init spawn_early.c forks
// before Go's runtime starts, and without, whose init a goroutine starts (launchPinned).
func TestKilledJailTakesTheSandboxWithIt(t *testing.T) {
	for _, dashes := range [][]string{{"--"}, nil} {
		t.Run(fmt.Sprintf("args %q", dashes), func(t *testing.T) {
			marker := fmt.Sprintf("%d.%d", 1000+os.Getpid()%1000, time.Now().UnixNano()%1000000)
			cmd := exec.Command(jailBin, append(dashes, "sleep", marker)...)
			cmd.Dir = t.TempDir()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pid := waitForProcess(t, cmd.Process.Pid, "sleep\x00"+marker)
			cmd.Process.Kill()
			cmd.Wait()
			for deadline := time.Now().Add(hangTimeout); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
					return
				}
			}
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("sandboxed process %d survived jail's SIGKILL", pid)
		})
	}
}

// waitForProcess returns the host pid of the process among root's descendants whose command line
// starts with cmdline, once it runs. Only root's: another test's or another run's processes may
// match too.
func waitForProcess(t *testing.T, root int, cmdline string) int {
	t.Helper()
	for deadline := time.Now().Add(hangTimeout); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if pid := findDescendant(root, cmdline); pid != 0 {
			return pid
		}
	}
	t.Fatalf("no process %q appeared under pid %d within %s", cmdline, root, hangTimeout)
	return 0
}

// findDescendant returns the pid of a descendant of root whose command line starts with
// cmdline, or 0.
func findDescendant(root int, cmdline string) int {
	for pids := []int{root}; len(pids) > 0; pids = pids[1:] {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pids[0]))
		for _, task := range tasks {
			children, _ := os.ReadFile(task)
			for _, field := range strings.Fields(string(children)) {
				pid, _ := strconv.Atoi(field)
				if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.HasPrefix(string(b), cmdline) {
					return pid
				}
				pids = append(pids, pid)
			}
		}
	}
	return 0
}

// findProcess returns the host pid of a process whose command line starts with cmdline, or 0.
func findProcess(cmdline string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.HasPrefix(string(b), cmdline) {
			return pid
		}
	}
	return 0
}

// TestSignalsReachTheCommand sends SIGUSR1 to jail and expects the command to get it, along each
// way a signal takes (waiter.c): straight from jail's waiter to the init the host adopted, when
// the host has left and when it stays (a report), and through the host when it runs an init of
// its own (a profile file asking for the host's network, which the early init does not have).
func TestSignalsReachTheCommand(t *testing.T) {
	dir := t.TempDir()
	hostNet := filepath.Join(dir, "hostnet.toml")
	testutil.WriteFile(t, hostNet, "extends = [\"agent\"]\n[network]\nmode = \"host\"\n")
	for _, args := range [][]string{nil, hostStays(t), {"-p", hostNet}} {
		if err := signalReachesCommand(dir, args); err != nil {
			t.Errorf("jail %q: %s", args, err)
		}
	}
}

// signalReachesCommand runs jail with args in dir on a command that waits for SIGUSR1, sends it
// to jail once the command runs, and says what went wrong.
func signalReachesCommand(dir string, args []string) error {
	cmd := exec.Command(jailBin, append(args, "--", "sh", "-c", `trap 'echo got-usr1; exit 3' USR1; echo ready; while :; do sleep 0.05; done`)...)
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	if !strings.Contains(string(buf[:n]), "ready") {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("no ready line: %q", buf[:n])
	}
	cmd.Process.Signal(syscall.SIGUSR1)
	rest := make([]byte, 64)
	m, _ := out.Read(rest)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 3 || !strings.Contains(string(rest[:m]), "got-usr1") {
		return fmt.Errorf("SIGUSR1 not forwarded: exit %d, output %q", code, rest[:m])
	}
	return nil
}

// TestRusageReachesTheCaller checks that `time jail -- CMD` tells the truth: the command's peak
// memory shows in jail's children's rusage.
func TestRusageReachesTheCaller(t *testing.T) {
	cmd := exec.Command(jailBin, "--", "python3", "-c", "b = bytearray(64 << 20); b[::4096] = b'x' * len(b[::4096])")
	cmd.Dir = t.TempDir()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %s", err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if ru.Maxrss < 60<<10 { // KiB
		t.Fatalf("peak RSS seen by the caller is %d KiB; the command used 64 MiB", ru.Maxrss)
	}
}

func TestNoDescriptorAboveTwoInherited(t *testing.T) {
	f, err := os.Open("/etc/hostname")
	if err != nil {
		f, err = os.Open("/etc/passwd")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(jailBin, "--", "sh", "-c", "ls /proc/self/fd")
	cmd.Dir = t.TempDir()
	cmd.ExtraFiles = []*os.File{f, f, f} // fds 3, 4, 5 in jail
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %s", err, out)
	}
	// ls itself holds one descriptor for the directory it lists.
	if fds := strings.Fields(string(out)); len(fds) > 4 {
		t.Fatalf("descriptors inside: %q", fds)
	}
}

func TestIdentityEnvironmentHostname(t *testing.T) {
	o := runOpts{dir: t.TempDir(), env: []string{"JAIL_TEST_SECRET=hunter2", "JAIL_TEST_PASS=ok"}}
	out, errOut, code := runJailWith(t, o, "--env", "JAIL_TEST_PASS", "--env", "JAIL_TEST_SET=1", "--",
		"sh", "-c", `echo "$(id -u):$(id -g) $(hostname) home=$HOME"; test -d "$HOME" && echo home-exists; env`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := fmt.Sprintf("%d:%d jail ", os.Getuid(), os.Getgid())
	if !strings.HasPrefix(out, want) {
		t.Errorf("identity line %q, want prefix %q", out, want)
	}
	for _, must := range []string{"home-exists", "JAIL_TEST_PASS=ok", "JAIL_TEST_SET=1", "PATH="} {
		if !strings.Contains(out, must) {
			t.Errorf("missing %q in %q", must, out)
		}
	}
	if strings.Contains(out, "hunter2") {
		t.Errorf("an unlisted variable leaked in: %q", out)
	}
}

// TestOpenFileLimitIsTheCallers: without [limits] open_files the command gets the caller's own
// soft limit, not the raised one Go gives itself at start-up (jail's init is started by its own
// code, which must put it back as Go's does).
func TestOpenFileLimitIsTheCallers(t *testing.T) {
	out, errOut, code := runJailWith(t, runOpts{dir: t.TempDir(), wrap: []string{"sh", "-c", `ulimit -Sn 512 && exec "$0" "$@"`}},
		"--", "sh", "-c", "ulimit -Sn")
	if code != 0 || strings.TrimSpace(out) != "512" {
		t.Fatalf("soft RLIMIT_NOFILE inside: %q (exit %d, %s), want the caller's 512", out, code, errOut)
	}
}

// TestSchedulingPolicyIsTheCallers: jail runs its host's threads as SCHED_BATCH when it is
// started with SCHED_OTHER (checked on a running jail), and gives the command SCHED_OTHER back,
// with the caller's nice value, in the sandbox and in the fallback; a caller's other policy
// (batch, idle) is left alone and reaches the command.
func TestSchedulingPolicyIsTheCallers(t *testing.T) {
	policy := []string{"--", "sh", "-c", `echo $(sed -n 's/^policy *: *//p' /proc/self/sched) $(cut -d' ' -f19 /proc/self/stat)`}
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	nice, _ := strconv.Atoi(strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))[16]) // this test's, field 19
	niced := min(nice+5, 19)
	for _, c := range []struct {
		wrap []string
		args []string
		want string // policy, nice
	}{
		{nil, nil, fmt.Sprint("0 ", nice)},
		{[]string{"nice", "-n", "5"}, nil, fmt.Sprint("0 ", niced)},
		{[]string{"chrt", "--batch", "0"}, nil, fmt.Sprint("3 ", nice)},
		{[]string{"chrt", "--idle", "0"}, nil, fmt.Sprint("5 ", nice)},
		{nil, []string{"-p", "minimal", "--fallback", "landlock", "--allow-weaker", "--ro", "/"}, fmt.Sprint("0 ", nice)},
	} {
		out, errOut, code := runJailWith(t, runOpts{dir: t.TempDir(), wrap: c.wrap}, append(c.args, policy...)...)
		if code != 0 || strings.TrimSpace(out) != c.want {
			t.Errorf("%q jail %q: the command's policy %q (exit %d, %s), want %s", c.wrap, c.args, out, code, errOut, c.want)
		}
	}

	// With a report to write the host stays while the command runs (waiter.c).
	cmd, _ := startSleeping(t, "--report", filepath.Join(t.TempDir(), "report.json")) // jail's runtimes have started their threads by then
	// The host's threads are SCHED_BATCH; the waiter, the process started, is SCHED_OTHER again
	// (waiter.c); init's thread that starts the command restores SCHED_OTHER first.
	policyOf := func(task string) string {
		b, _ := os.ReadFile(task)
		if m := regexp.MustCompile(`(?m)^policy\s*:\s*(\d+)`).FindSubmatch(b); m != nil {
			return string(m[1])
		}
		return ""
	}
	if p := policyOf(fmt.Sprintf("/proc/%d/sched", cmd.Process.Pid)); p != "0" {
		t.Errorf("the waiter's policy %q, want SCHED_OTHER (0)", p)
	}
	var tasks []string
	children, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%[1]d/children", cmd.Process.Pid))
	for _, pid := range strings.Fields(string(children)) {
		if comm, _ := os.ReadFile("/proc/" + pid + "/comm"); string(comm) == jailComm+"\n" {
			tasks, _ = filepath.Glob("/proc/" + pid + "/task/*/sched")
		}
	}
	if len(tasks) < 2 {
		t.Fatalf("the host's threads: %q", tasks)
	}
	for _, task := range tasks {
		if p := policyOf(task); p != "3" {
			t.Errorf("%s: policy %q, want SCHED_BATCH (3)", task, p)
		}
	}
}

// TestProcessLimitHoldsAndInitSurvives runs a fork bomb under [limits] processes: the forks stop
// near the limit, and jail's init, whose threads count against the same limit, survives it.
// Root is exempt from RLIMIT_NPROC by the kernel's design, so this runs as an ordinary user.
func TestProcessLimitHoldsAndInitSurvives(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("the kernel does not apply RLIMIT_NPROC to root; .ci/run runs this as an ordinary user")
	}
	dir := t.TempDir()
	profile := filepath.Join(dir, "limited.toml")
	testutil.WriteFile(t, profile, "extends = [\"agent\"]\n[limits]\nprocesses = 20\n")
	bomb := `import os, time
n = 0
try:
    for i in range(200):
        if os.fork() == 0:
            time.sleep(2)
            os._exit(0)
        n += 1
except BlockingIOError:
    pass
print(n)`
	out, errOut, code := runJailIn(t, dir, "", "-p", profile, "--", "python3", "-c", bomb)
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if code != 0 || err != nil || n < 10 || n > 28 {
		t.Fatalf("forks under processes = 20: %q (exit %d, %s)", out, code, errOut)
	}
}

// TestOrphansDieWithTheCommand: a process the command leaves running in the background (even in
// a session of its own) does not outlive the run.
func TestOrphansDieWithTheCommand(t *testing.T) {
	marker := fmt.Sprintf("%d.%d", 2000+os.Getpid()%1000, time.Now().UnixNano()%1000000)
	// The command exits once the background sleep runs (setsid executes it in the same process).
	script := `setsid sleep "$1" </dev/null >/dev/null 2>&1 &
		for i in $(seq 1000); do [ "$(tr '\0' ' ' </proc/$!/cmdline)" = "sleep $1 " ] && break; sleep 0.01; done; exit 0`
	_, errOut, code := runJail(t, "--", "sh", "-c", script, "sh", marker)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	pid := findProcess("sleep\x00" + marker)
	if pid != 0 {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the command's background process %d outlived the run", pid)
	}
}

// TestInitReapsOrphansAsTheyEnd: init, pid 1, reaps an orphan that ends while the command still
// runs, rather than leaving it a zombie (which counts against the process limit) until the end.
func TestInitReapsOrphansAsTheyEnd(t *testing.T) {
	// Each orphan is gone (reaped) before the command ends, or a zombie is listed.
	script := `for i in 1 2 3 4 5; do (true &); done
		for i in $(seq 300); do grep -lq '^State:.*Z' /proc/[0-9]*/status 2>/dev/null || break; sleep 0.05; done
		grep -l '^State:.*Z' /proc/[0-9]*/status 2>/dev/null; echo done`
	out, errOut, code := runJail(t, "--", "sh", "-c", script)
	if code != 0 || strings.TrimSpace(out) != "done" {
		t.Fatalf("zombies left while the command ran (exit %d): %q %s", code, out, errOut)
	}
}
