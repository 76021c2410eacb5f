package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGKILLLeavesNothing kills jail (the process its caller started) with SIGKILL at random
// moments of its life, with the egress proxy, twenty times: afterwards no file or directory of
// it is left in $TMPDIR, no process of it runs, no mount of it is on the host. The proxy's socket
// was a file in $TMPDIR, left behind by 19 runs in 20.
func TestSIGKILLLeavesNothing(t *testing.T) {
	tmp, dir := t.TempDir(), t.TempDir()
	marker := fmt.Sprintf("30.%d%06d", os.Getpid()%1000, time.Now().UnixNano()%1000000)
	for i := range 20 {
		cmd := exec.Command(jailBin, "--allow-host", "example.com", "--", "sleep", marker)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.IntN(30_000)) * time.Microsecond) // setup takes ~10 ms
		cmd.Process.Signal(syscall.SIGKILL)
		if err := cmd.Wait(); err == nil {
			t.Fatalf("run %d: jail was not killed", i)
		}
	}
	if left := leftoverProcesses(marker); len(left) > 0 {
		t.Errorf("processes left: %q", left)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		t.Errorf("left in $TMPDIR: %v", entries)
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	for _, p := range []string{tmp, dir} {
		if strings.Contains(string(mounts), p) {
			t.Errorf("a mount on the host under %s:\n%s", p, mounts)
		}
	}
}

// leftoverProcesses lists the processes whose command line holds marker, once those that are
// dying (a SIGKILLed jail's host and init follow it within moments) are gone; it gives them a
// few seconds.
func leftoverProcesses(marker string) []string {
	var left []string
	for range 50 {
		left = nil
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if strings.Contains(string(b), marker) {
				left = append(left, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
			}
		}
		if len(left) == 0 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return left
}
