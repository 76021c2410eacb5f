package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// jailChildren returns the comm of each child of jail's process pid, by pid.
func jailChildren(t *testing.T, pid int) map[int]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%[1]d/children", pid))
	if err != nil {
		t.Fatal(err)
	}
	children := map[int]string{}
	for _, f := range strings.Fields(string(b)) {
		var child int
		fmt.Sscan(f, &child)
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", child))
		children[child] = strings.TrimSpace(string(comm))
	}
	return children
}

// statFields returns the fields of /proc/PID/stat after the command name: the state first, then
// the parent, the process group, the session…
func statFields(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])), nil
}

// statField returns field i of statFields(pid), failing t when pid is gone.
func statField(t *testing.T, pid, i int) string {
	t.Helper()
	fields, err := statFields(pid)
	if err != nil {
		t.Fatal(err)
	}
	return fields[i]
}

// sessionOf returns the session id of process pid.
func sessionOf(t *testing.T, pid int) string {
	t.Helper()
	return statField(t, pid, 3)
}

// startSleeping starts jail with args, then `sleep MARKER`, and returns once the sleep runs,
// with the sleep's host pid.
func startSleeping(t *testing.T, args ...string) (*exec.Cmd, int) {
	t.Helper()
	marker := fmt.Sprintf("%d.%d", 1000+os.Getpid()%1000, time.Now().UnixNano()%1000000)
	cmd := exec.Command(jailBin, append(args, "--", "sleep", marker)...)
	cmd.Dir = t.TempDir()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, waitForProcess(t, cmd.Process.Pid, "sleep\x00"+marker)
}

// TestHostLeavesOnceTheCommandRuns: the process jail's caller waits for is a small waiter,
// init's parent (waiter.c). With nothing left to do once init has its plan, the Go host leaves
// while the command runs and init is the waiter's only child, also with a timeout, which the
// waiter enforces then; with a report to write it stays, in a session of its own so that
// signals for jail's process group reach it once, through the waiter.
func TestHostLeavesOnceTheCommandRuns(t *testing.T) {
	for _, args := range [][]string{nil, {"--timeout", "1m"}} {
		jail, _ := startSleeping(t, args...)
		// The host exits as init builds the sandbox; on a loaded machine it may still be
		// ending when the command starts.
		children := jailChildren(t, jail.Process.Pid)
		for deadline := time.Now().Add(hangTimeout); len(children) > 1 && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
			children = jailChildren(t, jail.Process.Pid)
		}
		if len(children) != 1 || !hasComm(children, "jail-init") {
			t.Errorf("jail %q: its children while the command runs: %v, want init alone", args, children)
		}
	}

	jail, _ := startSleeping(t, hostStays(t)...)
	children := jailChildren(t, jail.Process.Pid)
	if len(children) != 2 || !hasComm(children, "jail-init") || !hasComm(children, jailComm) {
		t.Fatalf("jail's children with a report: %v, want init and the host", children)
	}
	for pid, comm := range children {
		if comm == jailComm && sessionOf(t, pid) == sessionOf(t, jail.Process.Pid) {
			t.Errorf("the host %d is in jail's session", pid)
		}
	}
}

// TestKilledHostTakesTheSandboxWithIt: when the host dies while it stays (here, to write a
// report), the waiter kills the sandbox and exits as the host died: 128+9.
func TestKilledHostTakesTheSandboxWithIt(t *testing.T) {
	jail, sleep := startSleeping(t, hostStays(t)...)
	for pid, comm := range jailChildren(t, jail.Process.Pid) {
		if comm == jailComm {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	done := make(chan error, 1)
	go func() { done <- jail.Wait() }()
	select {
	case <-done:
	case <-time.After(hangTimeout):
		t.Fatalf("jail still runs %s after its host was killed", hangTimeout)
	}
	if code := jail.ProcessState.ExitCode(); code != 137 {
		t.Errorf("jail exited %d, want 137", code)
	}
	if running(sleep) {
		syscall.Kill(sleep, syscall.SIGKILL)
		t.Errorf("the sandboxed sleep %d outlived jail", sleep)
	}
}

func hasComm(children map[int]string, comm string) bool {
	for _, c := range children {
		if c == comm {
			return true
		}
	}
	return false
}

// TestErrorsReadTheSameWhetherTheHostStays: when the host has left the sandbox to the waiter,
// init prints its own setup error (wire.Config.HostLeaves) and the waiter the timeout's; the
// line and the exit status are those the staying host prints (here kept by a report).
func TestErrorsReadTheSameWhetherTheHostStays(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"--", "no-such-command-jail-test"}, 127},
		{[]string{"--timeout", "200ms", "--", "sleep", "30"}, 124},
	} {
		_, left, leftCode := runJailIn(t, dir, "", c.args...)
		_, stayed, stayedCode := runJailIn(t, dir, "", append(hostStays(t), c.args...)...)
		if left != stayed || leftCode != c.want || stayedCode != c.want || !strings.HasPrefix(left, "jail: ") {
			t.Errorf("jail %q: host left: exit %d, %q; host stayed: exit %d, %q; want %d and the same line",
				c.args, leftCode, left, stayedCode, stayed, c.want)
		}
	}
}

// TestKilledJailTakesTheHostWithIt: SIGKILL on the process jail's caller started (the waiter)
// ends init and the sandbox with it, and the host too: it dies with its parent as init does, and
// would otherwise find the waiter's pipe closed where it waits for init's status.
func TestKilledJailTakesTheHostWithIt(t *testing.T) {
	jail, sleep := startSleeping(t, hostStays(t)...)
	var host int
	for pid, comm := range jailChildren(t, jail.Process.Pid) {
		if comm == jailComm {
			host = pid
		}
	}
	if host == 0 {
		t.Fatal("no host")
	}
	jail.Process.Kill()
	jail.Wait()
	for _, pid := range []int{host, sleep} {
		gone := false
		for i := 0; i < 100 && !gone; i++ {
			gone = !running(pid)
			time.Sleep(20 * time.Millisecond)
		}
		if !gone {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("process %d outlived jail's SIGKILL", pid)
		}
	}
}

// running reports whether process pid exists and has not ended (a zombie has: whoever
// inherited it may not have reaped it yet).
func running(pid int) bool {
	fields, err := statFields(pid)
	return err == nil && len(fields) > 0 && fields[0] != "Z"
}

// hostStays returns options that keep the host to the end of the run: a report to write.
func hostStays(t *testing.T) []string {
	return []string{"--report", filepath.Join(t.TempDir(), "report.json")}
}

// setupStays returns options that keep init's setup beside the command to the end of the run:
// -v, with which it lists what goes with the sandbox at the end. (Neither a report nor the egress
// proxy keeps it any more; --explain does too, but its listener answers the command's calls, and
// a command that stops it waits on them.)
func setupStays() []string {
	return []string{"-v"}
}

// TestCommandIsPid1sChild: the command is the child of the sandbox's pid 1 (pid1.c), which reaps
// it; init's setup, pid 1's other child, has left by the time the command runs, also with a
// report (pid 1 sends the command's end) and an egress proxy (the host accepts on the ports), and
// stays only with work of its own during the run (here --explain's listener).
func TestCommandIsPid1sChild(t *testing.T) {
	script := `echo $PPID; for i in $(seq 300); do [ "$(cat /proc/[0-9]*/comm 2>/dev/null | grep -c jail-init)" = "$1" ] && exit 0; sleep 0.1; done; cat /proc/[0-9]*/comm; exit 1`
	for _, c := range []struct {
		name  string
		args  []string
		inits string // processes named jail-init in the sandbox
	}{
		{"plain", nil, "1"},
		{"reported", hostStays(t), "1"},
		{"proxied", []string{"--allow-host", "127.0.0.1:1"}, "1"},
		{"explained", []string{"--explain"}, "2"},
	} {
		args := append(append(c.args, "--", "sh", "-c", script, "sh"), c.inits)
		out, errOut, code := runJail(t, args...)
		if code != 0 || out != "1\n" {
			t.Errorf("%s: the command's parent and the processes inside: %q (exit %d, %s); want parent 1, %s jail-init", c.name, out, code, errOut, c.inits)
		}
	}
}

// TestSignalsBeforeTheCommandAreKept: a signal sent while the sandbox is still being set up, to
// jail or straight to the sandbox's pid 1, reaches the command once it exists. jail reads its
// profile from a FIFO here, so the signal is surely sent before the plan, and so the command,
// exists; pid 1 blocks the signals before it forks the setup (pid1.c), the waiter holds them
// until the host says where they go (waiter.c).
func TestSignalsBeforeTheCommandAreKept(t *testing.T) {
	for _, to := range []string{"jail", "jail-init"} {
		cmd, fifo := startReadingProfile(t, t.TempDir(), "--", "sleep", "10")
		// The waiter, init and the host exist (the host waiting for its profile), and the one
		// the signal goes to blocks it: the waiter right after forking the host, pid 1 before
		// forking the setup.
		var children map[int]string
		for deadline := time.Now().Add(hangTimeout); len(children) < 2 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
			children = jailChildren(t, cmd.Process.Pid)
		}
		pid := cmd.Process.Pid // jail: the waiter
		for child, comm := range children {
			if to == "jail-init" && comm == to {
				pid = child
			}
		}
		waitForSignal(t, pid, "SigBlk", syscall.SIGUSR1)
		syscall.Kill(pid, syscall.SIGUSR1)
		// The signal is pending where it went, the plan unsent. Then the profile, once the host
		// reads it (and so still runs).
		waitForSignal(t, pid, "ShdPnd", syscall.SIGUSR1)
		f := openFIFOWriter(t, fifo)
		f.WriteString("extends = [\"agent\"]\n")
		f.Close()
		cmd.Wait() // a lost signal leaves the sleep to end by itself: exit 0
		if code := cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGUSR1) {
			t.Errorf("SIGUSR1 to %s (pid %d of %v) before the command existed: exit %d, want %d",
				to, pid, children, code, 128+int(syscall.SIGUSR1))
		}
	}
}

// waitForSignal returns once sig is in the signal set field ("SigBlk": blocked, "ShdPnd":
// pending for the process) of process pid's /proc status, waiting at most hangTimeout.
func waitForSignal(t *testing.T, pid int, field string, sig syscall.Signal) {
	t.Helper()
	for deadline := time.Now().Add(hangTimeout); !signalIn(t, pid, field, sig); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%v never in %s of process %d", sig, field, pid)
		}
	}
}

// signalIn reports whether sig is in the signal set field of process pid's /proc status.
func signalIn(t *testing.T, pid int, field string, sig syscall.Signal) bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("process %d: %v", pid, err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			set, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && set&(1<<(sig-1)) != 0
		}
	}
	return false
}

// TestCallerIgnoringSIGCHLD: a caller that ignores SIGCHLD passes that on to jail, and the kernel
// would then reap the waiter's children itself, leaving it waiting for an init already gone.
// The run still ends with the command's status, and the command gets SIGCHLD's default back.
func TestCallerIgnoringSIGCHLD(t *testing.T) {
	ignoring := []string{"perl", "-e", `$SIG{CHLD} = "IGNORE"; exec @ARGV or die`}
	out, errOut, code := runJailWith(t, runOpts{dir: t.TempDir(), wrap: ignoring},
		"--", "sh", "-c", "grep SigIgn /proc/self/status; exit 3")
	if code != 3 || !strings.Contains(out, "SigIgn:\t0000000000000000") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 3 and no signal ignored", code, out, errOut)
	}
}

// TestSignalAfterTheCommandEndsTheRun: once the command has ended, a signal to jail ends a setup
// that stays to finish the run (here for -v), and jail exits with the command's status.
// Without Landlock's signal scope (an older kernel, or Landlock off as in this profile) the
// command can stop that setup, and jail would otherwise wait for it for ever. The command stops
// it only once a SIGUSR1 sent to jail has reached it, which pid 1 forwards once the setup has
// named the command to it.
func TestSignalAfterTheCommandEndsTheRun(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join(dir, "no-landlock.toml")
	testutil.WriteFile(t, profile, "extends = [\"agent\"]\n[landlock]\nmode = \"off\"\n")
	script := `trap "" TERM; trap "named=1" USR1; : >ready
		until [ -n "$named" ]; do sleep 0.01; done
		` + findSetup + `
		kill -STOP $setup && : >stopped
		exit 3`
	cmd := exec.Command(jailBin, append(append([]string{"-p", profile}, setupStays()...), "--", "sh", "-c", script)...)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for deadline := time.Now().Add(hangTimeout); ; {
		select {
		case <-done:
			if code := cmd.ProcessState.ExitCode(); code != 3 {
				t.Errorf("jail exited %d (%v), want the command's 3", code, cmd.ProcessState)
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			t.Fatalf("jail still ran after %s, with SIGTERMs sent once the command had stopped the setup", hangTimeout)
		}
		switch {
		case exists(filepath.Join(dir, "stopped")):
			cmd.Process.Signal(syscall.SIGTERM) // the first may reach the command: it ignores it
		case exists(filepath.Join(dir, "ready")):
			cmd.Process.Signal(syscall.SIGUSR1)
		}
	}
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
