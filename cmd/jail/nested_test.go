package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// These tests run jail inside outer user namespaces, as it runs inside a nested or rootless
// container: as root of a namespace that has only some ids, as a user with no mapping at all,
// under a /proc with masked entries, and in a root without /tmp. Every run must end, with the
// command's status or one jail: line, well within hangTimeout: a run that outlives it is a hang.

// hangTimeout is how long a run may take before the test calls it hung.
const hangTimeout = 30 * time.Second

var (
	// nestedRootPrefix runs jail as root of a user namespace that maps the caller's uid alone,
	// as `unshare -U -r jail …` does.
	nestedRootPrefix = []string{"unshare", "--user", "--map-root-user"}
	// twiceNestedPrefix is that twice over.
	twiceNestedPrefix = []string{"unshare", "--user", "--map-root-user", "unshare", "--user", "--map-root-user"}
	// unmappedPrefix runs jail in a user namespace with no map at all: its uid is the overflow id.
	unmappedPrefix = []string{"unshare", "--user"}
	// maskedProcPrefix runs jail under a /proc with masked entries, as Docker's and Podman's
	// default masked paths make it: a new pid namespace's own /proc, with /dev/null bound over
	// /proc/keys and /proc/timer_list. It lists the proc mounts jail starts under on stderr, for
	// a failure to show.
	maskedProcPrefix = maskedProc(`grep -w proc /proc/self/mountinfo >&2
exec "$@"`)
	// noTmpPrefix runs jail in a root that has no /tmp, so that init's first step, mounting its
	// scratch root on /tmp, fails before the plan arrives.
	noTmpPrefix = []string{"unshare", "--user", "--map-root-user", "--mount", "sh", "-c", inContainerRoot(`mkdir "$root/proc" "$root/jail"
mount --rbind /proc "$root/proc"
cp "$1" "$root/jail/jail"
shift`, `cd /
exec /jail/jail "$@"`), "sh"}
)

// maskedProc is maskedProcPrefix with then as the script that runs jail ("$@"), in the working
// directory.
func maskedProc(then string) []string {
	return []string{"unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork", "sh", "-c", inContainerRoot(`wd=$PWD
mkdir "$root/proc" "$root/tmp"
mount -t proc proc "$root/proc"
mount --bind /tmp "$root/tmp"
if [ ! -e "$root$1" ]; then mkdir -p "$root${1%/*}"; : >"$root$1"; mount --bind "$1" "$root$1"; fi`, `for f in /proc/keys /proc/timer_list; do [ ! -e $f ] || mount --bind /dev/null $f; done
cd "$wd"
`+then), "sh"}
}

// inContainerRoot is a prefix's script that runs then in a root of its own, as a container's
// does: a tmpfs holding the host's /usr, /etc, /dev, /home and /root and what setup adds to
// $root, and nothing else of the host's mount table. Another program's procfs there (a chroot's
// /proc, which debootstrap mounts) would let the sandbox mount a /proc of its own where the
// container's masks must refuse it: the kernel lets a user namespace mount a procfs where its
// mount table already shows one whole. Any step that fails ends the script, its error on stderr.
// $root is made in the working directory, which the test removes.
func inContainerRoot(setup, then string) string {
	return `set -e
root=$(mktemp -d -p "$PWD")
mount -t tmpfs tmpfs "$root"
for d in /usr /etc /dev /home /root; do
	if [ -d "$d" ]; then mkdir -p "$root$d"; mount --rbind "$d" "$root$d"; fi
done
for l in /bin /sbin /lib /lib64; do [ -L "$l" ] && ln -s "$(readlink "$l")" "$root$l"; done
` + setup + `
mkdir "$root/old"
cd "$root"
pivot_root . old
umount -l /old
` + then
}

// runNested runs jail with args under prefix in a fresh working directory, and fails the test
// when it does not end within hangTimeout.
func runNested(t *testing.T, prefix []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runJailWith(t, runOpts{dir: t.TempDir(), wrap: prefix, timeout: hangTimeout}, args...)
}

// jailLines are the lines of stderr jail printed, warnings and notices left out.
func jailLines(stderr string) []string {
	var lines []string
	for line := range strings.SplitSeq(stderr, "\n") {
		if strings.HasPrefix(line, "jail: ") && !strings.HasPrefix(line, "jail: warning: ") && !strings.HasPrefix(line, "jail: notice: ") {
			lines = append(lines, line)
		}
	}
	return lines
}

func TestNestedUserNamespace(t *testing.T) {
	for name, prefix := range map[string][]string{"unshare -U -r": nestedRootPrefix, "twice": twiceNestedPrefix} {
		out, errOut, code := runNested(t, prefix, "--", "sh", "-c", "id -u; id -g; cat /proc/self/uid_map")
		if code != 0 {
			t.Errorf("%s: exit %d, stderr %q", name, code, errOut)
			continue
		}
		// root of a namespace with one uid keeps that one, as root.
		if f := strings.Fields(out); len(f) != 5 || f[0] != "0" || f[1] != "0" || f[2] != "0" || f[3] != "0" || f[4] != "1" {
			t.Errorf("%s: id -u, id -g and the uid map inside: %q, want 0, 0 and \"0 0 1\"", name, out)
		}
	}
}

// TestSignalDuringNestedStartup: SIGTERM sent to jail while it starts in a nested user namespace
// ends the run (the command gets it once it exists: 143), where jail used to hang in its clone,
// deaf to it.
func TestSignalDuringNestedStartup(t *testing.T) {
	cmd := exec.Command(nestedRootPrefix[0], append(nestedRootPrefix[1:], jailBin, "--", "sleep", "30")...)
	cmd.Dir = t.TempDir()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Start-up is under way once jail has started init (it has a child) and SIGTERM no longer
	// ends it by its default action: the waiter blocks it, a Go host catches it.
	pid := cmd.Process.Pid
	for deadline := time.Now().Add(hangTimeout); ; time.Sleep(time.Millisecond) {
		if hasChild(pid) && (signalIn(t, pid, "SigBlk", syscall.SIGTERM) || signalIn(t, pid, "SigCgt", syscall.SIGTERM)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("jail never started init")
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(hangTimeout):
		cmd.Process.Kill()
		t.Fatal("jail did not end on SIGTERM during its start-up")
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !(ws.Exited() && ws.ExitStatus() == 128+int(syscall.SIGTERM)) && !(ws.Signaled() && ws.Signal() == syscall.SIGTERM) {
		t.Errorf("jail ended with %v, want the command's SIGTERM (143) or jail killed by it", ws)
	}
}

// hasChild reports whether any thread of process pid has a child.
func hasChild(pid int) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, task := range tasks {
		if b, _ := os.ReadFile(task); len(strings.TrimSpace(string(b))) > 0 {
			return true
		}
	}
	return false
}

// TestNestedUserNamespaceKeepsEveryID runs jail as root of a namespace that has several ranges
// of ids, as a rootless container's has (root onto the user, 1..65536 onto its subordinate ids):
// the sandbox maps every one of them, so that files keep their owners, and not root's alone.
func TestNestedUserNamespaceKeepsEveryID(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("only root writes a map of several ranges without newuidmap")
	}
	maps := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}, {ContainerID: 1, HostID: 100000, Size: 65536}}
	dir := t.TempDir()
	owned := dir + "/owned"
	testutil.WriteFile(t, owned, "x")
	if err := os.Chown(owned, 100999, 100999); err != nil { // uid and gid 1000 inside
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	sys := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER, UidMappings: maps, GidMappings: maps}
	out, errOut, code := runJailWith(t, runOpts{dir: dir, sys: sys, timeout: hangTimeout},
		"--", "sh", "-c", "stat -c %u:%g owned; cat /proc/self/uid_map /proc/self/gid_map")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := []string{"1000:1000", "0", "0", "1", "1", "1", "65536", "0", "0", "1", "1", "1", "65536"}
	if got := strings.Fields(out); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("owner of a file of uid 1000, and the maps inside: %q, want %q", got, want)
	}
}

// TestUnmappedUserNamespaceFailsInOneLine: a user the namespace does not map gets no user
// namespace from the kernel; jail says so in one line naming the cause, and runs nothing.
func TestUnmappedUserNamespaceFailsInOneLine(t *testing.T) {
	_, errOut, code := runNested(t, unmappedPrefix, "--", "sh", "-c", "echo ran")
	lines := jailLines(errOut)
	if code != exitFailure || len(lines) != 1 || !strings.Contains(lines[0], "has no mapping") || !strings.Contains(lines[0], "unshare -U -r") {
		t.Errorf("exit %d, jail's lines %q; want 125 and one line naming the missing map and its fix", code, lines)
	}
}

// TestRootWithoutSetfcap: the kernel lets root map itself into a new user namespace only with
// CAP_SETFCAP, which a container's dropped capabilities take away. Without it jail fails in one
// line naming it; with it alone (no CAP_SETUID to map more), the sandbox maps root alone.
func TestRootWithoutSetfcap(t *testing.T) {
	_, err := exec.LookPath("setpriv")
	testutil.Require(t, err == nil, "setpriv(1)")
	capless := append(append([]string{}, nestedRootPrefix...), "setpriv", "--bounding-set=-all", "--")
	_, errOut, code := runNested(t, capless, "--", "sh", "-c", "echo ran")
	lines := jailLines(errOut)
	if code != exitFailure || len(lines) != 1 || !strings.Contains(lines[0], "CAP_SETFCAP") {
		t.Errorf("root without capabilities: exit %d, jail's lines %q; want 125 and one line naming CAP_SETFCAP", code, lines)
	}
	setfcap := append(append([]string{}, nestedRootPrefix...), "setpriv", "--bounding-set=-all,+setfcap", "--")
	out, errOut, code := runNested(t, setfcap, "--", "sh", "-c", "id -u")
	if code != 0 || out != "0\n" {
		t.Errorf("root with CAP_SETFCAP alone: exit %d, stdout %q, stderr %q; want uid 0", code, out, errOut)
	}
}

// TestSetupErrorBeforeThePlanIsPrinted: init's first step fails before its plan arrives, while
// jail's host hands the sandbox over and exits. The error was sent to the host, which could be
// gone unread: jail exited 125 saying nothing in most runs. Every run must print it.
func TestSetupErrorBeforeThePlanIsPrinted(t *testing.T) {
	for i := range 10 {
		args := []string{"-p", "minimal", "--", "/jail/jail", "--version"}
		if i%2 == 1 {
			args = append([]string{"-v"}, args...)
		}
		_, errOut, code := runNested(t, noTmpPrefix, args...)
		if code != exitFailure || !strings.Contains(errOut, "jail: setup root: mount tmpfs on /tmp: no such file or directory") {
			t.Errorf("run %d (%q): exit %d, stderr %q; want 125 and init's error", i, args, code, errOut)
		}
	}
}

// TestMaskedProc: under a /proc with masked entries the kernel refuses the sandbox a /proc of its
// own. jail fails closed with both ways on; with --allow-weaker it binds the outer /proc, masks
// kept and read-only, and says what it shows. The outer processes it lists keep their
// environment closed and their /proc files unwritten, which the same reads and writes from
// outside jail show to be possible.
func TestMaskedProc(t *testing.T) {
	// The command, which must not run, lists the proc mounts it would see.
	out, errOut, code := runNested(t, maskedProcPrefix, "--", "grep", "-w", "proc", "/proc/self/mountinfo")
	lines := jailLines(errOut)
	if code != exitFailure || len(lines) != 1 || !strings.Contains(lines[0], "--allow-weaker") || !strings.Contains(lines[0], "unmask=ALL") {
		t.Fatalf("masked /proc without --allow-weaker: exit %d, jail's lines %q; want 125 and one line with both ways on\nstdout:\n%s\nstderr:\n%s", code, lines, out, errOut)
	}
	// The outer pid namespace's processes: a shell whose environment holds a secret, which waits
	// while jail runs. Its pid there is 2 (unshare's sh is 1).
	prefix := maskedProc(`set +e
SECRET=s3cret sleep 31 &
until tr '\0' ' ' < /proc/$!/cmdline | grep -q '^sleep 31 '; do sleep 0.01; done
tr '\0' '\n' < /proc/$!/environ | grep -c SECRET= > /proc/self/fd/2 || true
echo 500 > /proc/$!/oom_score_adj && echo writable-outside >&2
"$@"; status=$?
kill $!
exit $status`)
	// Each line of output is computed, so that the script's own text, which /proc lists as a
	// command line, cannot pass for it.
	script := `cat /proc/*/cmdline | tr '\0' ' ' | grep -q 'sleep 3[1]' && echo L$((0+1))
for p in /proc/[0-9]*; do tr '\0' '\n' < $p/environ 2>/dev/null; done | grep -c SECRET= | sed 's/^/E/'
for p in /proc/[0-9]*; do
	if tr '\0' ' ' < $p/cmdline | grep -q '^sleep 3[1]'; then echo 900 > $p/oom_score_adj 2>/dev/null && echo W$((6*7)); fi
done
wc -c < /proc/keys 2>/dev/null | sed 's/^/K/'`
	out, errOut, code = runNested(t, prefix, "--allow-weaker", "--", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("masked /proc with --allow-weaker: exit %d, stderr:\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "1\n") || !strings.Contains(errOut, "writable-outside") {
		t.Fatalf("the control failed: outside jail the secret or the write did not work: %q", errOut)
	}
	if !strings.Contains(errOut, "jail: notice: /proc is the container's") {
		t.Errorf("no notice of the container's /proc: %q", errOut)
	}
	// L1: the outer processes are listed (the sandbox's own /proc would not list them); E0: no
	// environment holds the secret; no W42: no outer /proc file was written; no K: the masked
	// /proc/keys cannot be read.
	if out != "L1\nE0\n" {
		t.Errorf("inside the sandbox: %q, want %q", out, "L1\nE0\n")
	}
}

// TestDoctorPredictsTheRun: in each setup, jail doctor exits 0 exactly when the default run
// succeeds, and a failing verdict carries a fix.
func TestDoctorPredictsTheRun(t *testing.T) {
	for name, prefix := range map[string][]string{
		"host":          nil,
		"unshare -U -r": nestedRootPrefix,
		"unshare -U":    unmappedPrefix,
		"masked /proc":  maskedProcPrefix,
	} {
		doctor, _, doctorCode := runNested(t, prefix, "doctor")
		_, errOut, code := runNested(t, prefix, "--", "true")
		if (doctorCode == 0) != (code == 0) {
			t.Errorf("%s: doctor exits %d, but the run exits %d (%q):\n%s", name, doctorCode, code, errOut, doctor)
		}
		if doctorCode != 0 && !strings.Contains(doctor, "fix: ") {
			t.Errorf("%s: a failing verdict without a fix:\n%s", name, doctor)
		}
	}
}
