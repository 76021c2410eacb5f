package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
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

// sessionOf returns the session id of process pid (field 6 of /proc/PID/stat).
func sessionOf(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))[3]
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
	return cmd, waitForProcess(t, "sleep\x00"+marker)
}

// TestHostLeavesOnceTheCommandRuns: the process jail's caller waits for is a small waiter,
// init's parent (waiter.c). With nothing left to do once init has its plan, the Go host has
// gone by the time the command runs and init is the waiter's only child; with a timeout to
// enforce it stays, in a session of its own so that signals for jail's process group reach it
// once, through the waiter.
func TestHostLeavesOnceTheCommandRuns(t *testing.T) {
	jail, _ := startSleeping(t)
	if children := jailChildren(t, jail.Process.Pid); len(children) != 1 || !hasComm(children, "jail-init") {
		t.Errorf("jail's children while the command runs: %v, want init alone", children)
	}

	jail, _ = startSleeping(t, "--timeout", "1m")
	children := jailChildren(t, jail.Process.Pid)
	if len(children) != 2 || !hasComm(children, "jail-init") || !hasComm(children, "jail") {
		t.Fatalf("jail's children with a timeout: %v, want init and the host", children)
	}
	for pid, comm := range children {
		if comm == "jail" && sessionOf(t, pid) == sessionOf(t, jail.Process.Pid) {
			t.Errorf("the host %d is in jail's session", pid)
		}
	}
}

// TestKilledHostTakesTheSandboxWithIt: when the host dies while it stays (here, to enforce a
// timeout), the waiter kills the sandbox and exits as the host died: 128+9.
func TestKilledHostTakesTheSandboxWithIt(t *testing.T) {
	jail, sleep := startSleeping(t, "--timeout", "1m")
	for pid, comm := range jailChildren(t, jail.Process.Pid) {
		if comm == "jail" {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	done := make(chan error, 1)
	go func() { done <- jail.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("jail still runs 10 s after its host was killed")
	}
	if code := jail.ProcessState.ExitCode(); code != 137 {
		t.Errorf("jail exited %d, want 137", code)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", sleep)); !os.IsNotExist(err) {
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

// TestSetupErrorsReadTheSameWhetherTheHostStays: when the host has left the sandbox to the
// waiter, init prints its own error (initConfig.HostLeaves); the line and the exit status are
// those the staying host prints (here kept by a timeout).
func TestSetupErrorsReadTheSameWhetherTheHostStays(t *testing.T) {
	dir := t.TempDir()
	_, left, leftCode := runJailIn(t, dir, "", "--", "no-such-command-jail-test")
	_, stayed, stayedCode := runJailIn(t, dir, "", "--timeout", "1m", "--", "no-such-command-jail-test")
	if left != stayed || leftCode != 127 || stayedCode != 127 {
		t.Errorf("host left: exit %d, %q; host stayed: exit %d, %q; want 127 and the same line", leftCode, left, stayedCode, stayed)
	}
}
