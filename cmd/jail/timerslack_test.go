package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestTimerSlackIsTheCallers: init's setup runs its threads with a coarse timer slack
// (spawn/slack.c), and the command gets the caller's back, whether the setup leaves once the
// command runs or stays for the run (-v). A setup that stays gives it back to its own threads too
// (checked as root, who alone may read a non-dumpable process's slack).
func TestTimerSlackIsTheCallers(t *testing.T) {
	// This thread's, which jail inherits from whichever thread starts it: Go's threads all have
	// the test's own. (/proc/self/timerslack_ns is the leader's, which only a thread holding
	// CAP_SYS_NICE may read from another.)
	slack, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := strconv.Itoa(slack)
	for _, args := range [][]string{nil, {"-v"}} {
		out, errOut, code := runJailWith(t, runOpts{dir: t.TempDir()}, append(args, "--", "cat", "/proc/self/timerslack_ns")...)
		if code != 0 || strings.TrimSpace(out) != want {
			t.Errorf("jail %q: the command's timer slack %q (exit %d, %s), want the caller's %s", args, out, code, errOut, want)
		}
	}
	if os.Getuid() != 0 {
		return
	}
	cmd, command := startSleeping(t, "-v")
	pid1 := parentOf(t, command)
	setup := 0
	for pid, comm := range jailChildren(t, pid1) {
		if pid != command && comm == "jail-init" {
			setup = pid
		}
	}
	if setup == 0 {
		t.Fatalf("no setup under pid 1 (%d) of jail %d", pid1, cmd.Process.Pid)
	}
	// It restores them once the command runs: wait for that, bounded.
	var slacks []string
	for deadline := time.Now().Add(hangTimeout); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		slacks = threadSlacks(setup)
		if len(slacks) > 0 && strings.Count(strings.Join(slacks, " ")+" ", want+" ") == len(slacks) {
			return
		}
	}
	t.Errorf("the staying setup's threads' timer slack %q, want the caller's %s", slacks, want)
}

// parentOf returns pid's parent.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	ppid, _ := strconv.Atoi(statField(t, pid, 1))
	return ppid
}

// threadSlacks returns the timer slack of each thread of pid.
func threadSlacks(pid int) []string {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	var slacks []string
	for _, task := range tasks {
		b, _ := os.ReadFile("/proc/" + filepath.Base(task) + "/timerslack_ns")
		slacks = append(slacks, strings.TrimSpace(string(b)))
	}
	return slacks
}
