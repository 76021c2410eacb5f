package jail

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/jail/internal/spawn"
	"github.com/jail-sandbox/jail/jail/internal/tty"
	"github.com/jail-sandbox/jail/plan"
)

// These tests run real sandboxes: Run re-executes this test binary as the sandbox's init, which
// TestMain dispatches first (runc's libcontainer/integration pattern). Run them as root and as an
// ordinary user:
//
//	go test -c -o /tmp/jt/jail.test ./jail && chmod -R a+rx /tmp/jt
//	runuser -u jailtest -- /tmp/jt/jail.test -test.v

// envKillHelper makes the test binary a jail host that runs a long command and waits (for
// TestHostKillKillsSandbox, which SIGKILLs it).
const envKillHelper = "JAIL_TEST_KILL_HELPER"

func TestMain(m *testing.M) {
	MaybeInit()
	if tag := os.Getenv(envKillHelper); tag != "" {
		status, err := Run(testSpec("sleep", tag), Options{}, Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
		if err != nil {
			fmt.Fprintln(os.Stderr, "jail:", err)
		}
		os.Exit(status)
	}
	os.Exit(m.Run())
}

// testSpec is a plan like the agent profile's, built by hand: the system read-only, /tmp
// writable, every namespace, Landlock and the default seccomp filter.
func testSpec(argv ...string) *plan.Spec {
	mounts := []plan.Mount{
		{Kind: plan.MountROBind, Source: "/usr", Target: "/usr"},
		{Kind: plan.MountROBind, Source: "/etc", Target: "/etc"},
	}
	for _, link := range []string{"/bin", "/sbin", "/lib", "/lib64"} {
		if text, err := os.Readlink(link); err == nil {
			mounts = append(mounts, plan.Mount{Kind: plan.MountSymlink, Source: text, Target: link})
		}
	}
	mounts = append(mounts,
		plan.Mount{Kind: plan.MountProc, Target: "/proc"},
		plan.Mount{Kind: plan.MountDev, Target: "/dev"},
		plan.Mount{Kind: plan.MountTmpfs, Target: "/tmp"},
	)
	return &plan.Spec{
		Profile:  "test",
		Argv:     argv,
		Cwd:      "/tmp",
		Env:      []string{"PATH=/usr/bin:/bin", "HOME=/tmp", "JAIL_TEST=1"},
		Hostname: "jail-test",
		Mounts:   mounts,
		Namespaces: plan.Namespaces{
			User: true, Mount: true, PID: true, IPC: true, UTS: true, Net: true, Cgroup: true,
		},
		Network: plan.Network{Mode: "none"},
		Limits:  plan.Limits{OpenFiles: 256, Tmpfs: 64 << 20},
		Landlock: plan.Landlock{
			Mode:  "best-effort",
			Read:  []string{"/usr", "/etc", "/proc", "/dev"},
			Write: []string{"/tmp", "/dev"},
		},
		Syscalls: plan.Syscalls{Default: "allow", Errno: "EPERM"},
	}
}

// run runs spec with stdin from /dev/null and returns stdout, stderr, the status and the error.
func run(t *testing.T, spec *plan.Spec) (stdout, stderr string, status int, err error) {
	return runWith(t, spec, Options{})
}

// runWith is run with opts.
func runWith(t *testing.T, spec *plan.Spec, opts Options) (stdout, stderr string, status int, err error) {
	t.Helper()
	dir := t.TempDir()
	outF, _ := os.Create(filepath.Join(dir, "out"))
	errF, _ := os.Create(filepath.Join(dir, "err"))
	defer outF.Close()
	defer errF.Close()
	status, err = Run(spec, opts, Stdio{Out: outF, Err: errF})
	o, _ := os.ReadFile(outF.Name())
	e, _ := os.ReadFile(errF.Name())
	return string(o), string(e), status, err
}

// mustRun runs argv in testSpec and fails unless it exits 0.
func mustRun(t *testing.T, argv ...string) string {
	t.Helper()
	out, errOut, status, err := run(t, testSpec(argv...))
	if err != nil || status != 0 {
		t.Fatalf("%q: status %d, err %v, stderr %q", argv, status, err, errOut)
	}
	return out
}

func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want int
	}{
		{[]string{"true"}, 0},
		{[]string{"sh", "-c", "exit 3"}, 3},
		{[]string{"sh", "-c", "kill -TERM $$"}, 128 + int(syscall.SIGTERM)},
		{[]string{"sh", "-c", "kill -KILL $$"}, 128 + int(syscall.SIGKILL)},
	} {
		_, errOut, status, err := run(t, testSpec(tc.argv...))
		if err != nil || status != tc.want {
			t.Errorf("%q: status %d, err %v (stderr %q); want %d", tc.argv, status, err, errOut, tc.want)
		}
	}
}

func TestExecErrors(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want int
		text string
	}{
		{[]string{"no-such-command"}, fail.ExitNotFound, "exec no-such-command: no such file or directory"},
		{[]string{"/usr/bin/no-such-command"}, fail.ExitNotFound, "exec /usr/bin/no-such-command: no such file or directory"},
		{[]string{"/etc/passwd"}, fail.ExitNotExecutable, "exec /etc/passwd: permission denied"},
		{[]string{"/usr"}, fail.ExitNotExecutable, "exec /usr: permission denied"},
	} {
		_, _, status, err := run(t, testSpec(tc.argv...))
		var je *fail.Error
		if !errors.As(err, &je) || status != tc.want || je.Exit != tc.want {
			t.Errorf("%q: status %d, err %v; want %d", tc.argv, status, err, tc.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), tc.text) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %q, want one line starting %q", tc.argv, err, tc.text)
		}
	}
}

func TestSetupErrorTravelsToHost(t *testing.T) {
	spec := testSpec("true")
	spec.Cwd = "/no/such/dir"
	_, _, status, err := run(t, spec)
	var je *fail.Error
	if !errors.As(err, &je) || status != fail.ExitSetup || je.Op != "chdir" || je.Errno != syscall.ENOENT {
		t.Fatalf("status %d, err %#v; want 125 and a chdir ENOENT error", status, err)
	}
}

func TestTimeout(t *testing.T) {
	spec := testSpec("sh", "-c", "sleep 1000 & sleep 1000")
	spec.Limits.TimeoutSeconds = 0.2
	_, _, status, err := run(t, spec)
	var je *fail.Error
	if status != fail.ExitTimeout || !errors.As(err, &je) || je.Exit != fail.ExitTimeout {
		t.Fatalf("status %d, err %v; want %d and a timeout error", status, err, fail.ExitTimeout)
	}
	if want := "timeout: killed the sandbox after 200ms"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// TestNoPrivileges checks the command holds no capability in any set and runs with
// no_new_privs, whether the caller is root or not.
func TestNoPrivileges(t *testing.T) {
	status := mustRun(t, "cat", "/proc/self/status")
	for _, field := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		if v := statusField(status, field); v != "0000000000000000" {
			t.Errorf("%s = %q, want all zero", field, v)
		}
	}
	if v := statusField(status, "NoNewPrivs"); v != "1" {
		t.Errorf("NoNewPrivs = %q, want 1", v)
	}
	if v := statusField(status, "Seccomp"); v != "2" {
		t.Errorf("Seccomp = %q, want 2 (filter)", v)
	}
}

// statusField returns the value of one field of /proc/PID/status text.
func statusField(status, name string) string {
	for line := range strings.SplitSeq(status, "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// TestPIDNamespace checks that init is pid 1 and nothing of the host shows: every process in the
// sandbox's /proc is jail's (pid 1, and init's setup until it has exited) or the command's.
func TestPIDNamespace(t *testing.T) {
	// sh's builtins only in the loop, so that the command is one process by then.
	out := mustRun(t, "sh", "-c", `tr '\0' ' ' </proc/1/cmdline; echo
		for d in /proc/[0-9]*; do read -r c 2>/dev/null <$d/comm && echo "${d#/proc/} $c"; done`)
	cmdline, list, _ := strings.Cut(out, "\n")
	if strings.TrimSpace(cmdline) != spawn.InitArg0 {
		t.Fatalf("pid 1 runs %q, want %s", cmdline, spawn.InitArg0)
	}
	comms := map[string]string{}
	for line := range strings.Lines(list) {
		pid, comm, _ := strings.Cut(strings.TrimSpace(line), " ")
		comms[pid] = comm
	}
	for pid, comm := range comms {
		if comm != comms["1"] && comm != "sh" {
			t.Errorf("sandbox sees pid %s (%s), neither jail's nor the command's: host processes visible? all:\n%s", pid, comm, list)
		}
	}
}

// TestIdentity checks the caller keeps its uid and gid inside (root stays root).
func TestIdentity(t *testing.T) {
	out := mustRun(t, "sh", "-c", "id -u; id -g")
	want := fmt.Sprintf("%d\n%d\n", os.Getuid(), os.Getgid())
	if out != want {
		t.Errorf("id inside = %q, want %q", out, want)
	}
}

// TestEnvironment checks the command's environment is exactly the Spec's, and its cwd.
func TestEnvironment(t *testing.T) {
	spec := testSpec("sh", "-c", "env -0; pwd")
	spec.Env = []string{"PATH=/usr/bin", "A=1", "B=two words"}
	spec.Cwd = "/usr"
	out, errOut, status, err := run(t, spec)
	if err != nil || status != 0 {
		t.Fatalf("status %d, err %v, stderr %q", status, err, errOut)
	}
	envText, pwd, _ := strings.Cut(out, "/usr\n")
	got := strings.Split(strings.TrimSuffix(envText, "\x00"), "\x00")
	// sh adds PWD (and some shells OLDPWD/SHLVL/_) on its own: only those may be extra.
	got = slices.DeleteFunc(got, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains([]string{"PWD", "OLDPWD", "SHLVL", "_"}, name)
	})
	slices.Sort(got)
	if want := []string{"A=1", "B=two words", "PATH=/usr/bin"}; !slices.Equal(got, want) || pwd != "" {
		t.Errorf("env %q, rest %q; want %q and cwd /usr", got, pwd, want)
	}
}

// TestFileDescriptors checks the command gets only 0, 1 and 2 even though the host and init
// hold others (the plan and report pipes, a file opened here without close-on-exec).
func TestFileDescriptors(t *testing.T) {
	f, err := os.Open("/etc/hostname")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fcntlClearCloexec(f); err != nil {
		t.Fatal(err)
	}
	// No pipeline: while sh sets one up it holds the pipe itself.
	out := mustRun(t, "sh", "-c", "ls /proc/$$/fd")
	if out != "0\n1\n2\n" {
		t.Errorf("command's fds: %q, want 0 1 2", out)
	}
}

// fcntlClearCloexec makes f inheritable, as a careless caller's descriptor would be.
func fcntlClearCloexec(f *os.File) (int, error) {
	_, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_SETFD, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(f.Fd()), nil
}

// TestNamespaceSetup checks hostname, loopback up in an otherwise empty network, and rlimits.
func TestNamespaceSetup(t *testing.T) {
	out := mustRun(t, "sh", "-c", "hostname; cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '; grep -c . /proc/net/if_inet6; ulimit -n; ulimit -c")
	if want := "jail-test\nlo\n1\n256\n0\n"; out != want {
		t.Errorf("got %q, want %q (hostname, interfaces, ::1 on lo, nofile, core)", out, want)
	}
}

// TestSignalForwarding sends SIGUSR1 to the host process; the command must get it.
func TestSignalForwarding(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	spec := testSpec("sh", "-c", `trap 'exit 42' USR1; echo ready; while :; do sleep 0.05; done`)
	done := make(chan int, 1)
	go func() {
		status, err := Run(spec, Options{}, Stdio{Out: w})
		w.Close()
		if err != nil {
			t.Error(err)
		}
		done <- status
	}()
	if line, _ := bufio.NewReader(r).ReadString('\n'); line != "ready\n" {
		t.Fatalf("command said %q", line)
	}
	syscall.Kill(os.Getpid(), syscall.SIGUSR1)
	if status := <-done; status != 42 {
		t.Errorf("status %d, want 42 (the command's USR1 trap)", status)
	}
}

// TestHostKillKillsSandbox SIGKILLs a jail host and checks its sandboxed command dies with it.
func TestHostKillKillsSandbox(t *testing.T) {
	tag := fmt.Sprintf("%d.%d", 1000+os.Getpid()%1000, time.Now().UnixNano()%1e6)
	host := exec.Command("/proc/self/exe", "-test.run=^$")
	host.Env = append(os.Environ(), envKillHelper+"="+tag)
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	pid := waitFor(t, func() int { return findProcess("sleep\x00" + tag + "\x00") })
	host.Process.Kill()
	host.Wait()
	waitFor(t, func() int {
		if syscall.Kill(pid, 0) != nil {
			return 1
		}
		return 0
	})
}

// waitFor polls f until it returns non-zero (at most a minute: this is a liveness check, not a
// timing one) and returns that.
func waitFor(t *testing.T, f func() int) int {
	t.Helper()
	for range 6000 {
		if v := f(); v != 0 {
			return v
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("gave up waiting")
	return 0
}

// findProcess returns the host pid of the process whose cmdline is exactly cmdline, or 0.
func findProcess(cmdline string) int {
	for _, pid := range procPIDs() {
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); bytes.Equal(b, []byte(cmdline)) {
			return pid
		}
	}
	return 0
}

// TestInteractiveTerminal drives `bash -i` through a terminal, as a person would: the command
// gets a terminal of its own from the sandbox's devpts (size included, and resized on SIGWINCH),
// Ctrl-C interrupts only the foreground job, and bash's exit status comes back.
func TestInteractiveTerminal(t *testing.T) {
	term, _, err := tty.Open(Stdio{}) // not a terminal: no relay
	if term != nil || err != nil {
		t.Fatalf("openPTY without a terminal: %v, %v", term, err)
	}
	outer := newTestTerminal(t)
	setSize(t, outer.slave, 33, 97)
	spec := testSpec("bash", "--norc", "--noprofile", "-i")
	spec.Env = append(spec.Env, "PS1=$ ", "TERM=dumb")
	done := make(chan int, 1)
	go func() {
		status, err := Run(spec, Options{}, Stdio{In: outer.slave, Out: outer.slave, Err: outer.slave})
		if err != nil {
			t.Error(err)
		}
		done <- status
	}()
	screen := outer.screen()
	say := func(keys, want string) {
		t.Helper()
		outer.master.WriteString(keys)
		if _, ok := screen.next(want); !ok {
			t.Fatalf("after %q, no %q on the screen: %q", keys, want, screen.String())
		}
	}
	say("[ -t 0 ] && [ -t 1 ] && echo term-$((6*7))\r", "term-42")
	say("stty size\r", "33 97")
	say("tty\r", "/dev/pts/0") // the sandbox's own devpts instance
	// Ctrl-C is for the foreground job once it runs (bash makes it the terminal's foreground
	// process group before its execve); sent earlier, it would reach bash instead.
	nap := fmt.Sprintf("100.%d", os.Getpid()%1000+1)
	say("sleep "+nap+"\r", "sleep "+nap)
	waitFor(t, func() int { return findProcess("sleep\x00" + nap + "\x00") })
	say("\x03", "$ ")
	say("echo status-$?\r", "status-130")
	setSize(t, outer.slave, 40, 120)
	syscall.Kill(os.Getpid(), syscall.SIGWINCH)
	// jail passes the new size on when it handles the signal: ask until the answer changes.
	for try := 0; ; try++ {
		outer.master.WriteString("stty size\r")
		shown, ok := screen.next("$ ")
		if strings.Contains(shown, "40 120") {
			break
		}
		if !ok || try == 100 {
			t.Fatalf("size not passed on after SIGWINCH: %q", shown)
		}
	}
	say("exit 7\r", "exit")
	if status := <-done; status != 7 {
		t.Errorf("status %d, want 7 (bash's exit)", status)
	}
}

// testTerminal is a pseudo-terminal standing for the caller's terminal.
type testTerminal struct{ master, slave *os.File }

// newTestTerminal opens a testTerminal.
func newTestTerminal(t *testing.T) *testTerminal {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close(); slave.Close() })
	return &testTerminal{master: master, slave: slave}
}

// setSize sets a terminal's window size.
func setSize(t *testing.T, f *os.File, rows, cols uint16) {
	t.Helper()
	if err := unix.IoctlSetWinsize(int(f.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}); err != nil {
		t.Fatal(err)
	}
}

// screen collects what a terminal shows.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// screen starts collecting what the terminal's master reads.
func (p *testTerminal) screen() *screen {
	s := &screen{}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := p.master.Read(b)
			s.mu.Lock()
			s.buf.Write(b[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return s
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// next waits until want appears after what was consumed before, and consumes and returns the
// text up to it.
func (s *screen) next(want string) (string, bool) {
	for range 3000 {
		s.mu.Lock()
		i := strings.Index(s.buf.String(), want)
		var shown string
		if i >= 0 {
			shown = string(s.buf.Next(i + len(want)))
		}
		s.mu.Unlock()
		if i >= 0 {
			return shown, true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return s.String(), false
}

// TestRusageReachesCaller checks the command's peak memory shows in jail's own children's
// rusage (what `time jail -- CMD` reports): init waits for everything before it exits.
func TestRusageReachesCaller(t *testing.T) {
	// sh keeps the 64 MB command substitution in memory.
	mustRun(t, "sh", "-c", `x=$(head -c 67108864 /dev/zero | tr '\0' a); echo ${#x}`)
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_CHILDREN, &ru); err != nil {
		t.Fatal(err)
	}
	if ru.Maxrss < 64*1024 {
		t.Errorf("children's peak RSS %d KB, want at least the command's 65536 KB", ru.Maxrss)
	}
}

// TestInitHasOwnSession checks init is outside jail's process group and session: a Ctrl-C from
// the terminal reaches only jail (which forwards it), not init a second time.
func TestInitHasOwnSession(t *testing.T) {
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(testSpec("sh", "-c", "echo ready; read x"), Options{}, Stdio{In: inR, Out: outW})
		outW.Close()
	}()
	defer func() { inW.Close(); <-done }() // EOF ends the command's read
	if line, _ := bufio.NewReader(outR).ReadString('\n'); line != "ready\n" {
		t.Fatalf("command said %q", line)
	}
	var init []string
	for _, pid := range procPIDs() {
		if st := procStat(pid); len(st) > 3 && st[1] == strconv.Itoa(os.Getpid()) && procArg0(pid) == spawn.InitArg0 {
			init = st
		}
	}
	sid, _ := unix.Getsid(0)
	if init == nil || init[2] == strconv.Itoa(syscall.Getpgrp()) || init[3] == strconv.Itoa(sid) {
		t.Errorf("init (stat fields %q) not found or shares jail's process group or session", init)
	}
}

// procPIDs lists the pids in /proc.
func procPIDs() []int {
	dirs, _ := os.ReadDir("/proc")
	var pids []int
	for _, d := range dirs {
		if pid, err := strconv.Atoi(d.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// procStat returns the fields of /proc/PID/stat after "(comm)": state, ppid, pgrp, session, ….
func procStat(pid int) []string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.Fields(rest)
}

// procArg0 returns argv[0] of process pid.
func procArg0(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	arg0, _, _ := strings.Cut(string(b), "\x00")
	return arg0
}

// TestInitOutOfReach checks the command can neither read init's memory map (init is
// non-dumpable) nor kill it.
func TestInitOutOfReach(t *testing.T) {
	out := mustRun(t, "sh", "-c", `cat /proc/1/maps >/dev/null 2>&1 && echo maps-readable; kill -KILL 1 2>/dev/null; sleep 0.1; echo alive`)
	if out != "alive\n" {
		t.Errorf("got %q, want init's maps unreadable and the sandbox alive after kill -KILL 1", out)
	}
}

// TestVerbose checks a verbose run logs every setup step in the sandbox, in order (the prelude's
// first), on the command's stderr.
func TestVerbose(t *testing.T) {
	_, stderr, status, err := runWith(t, testSpec("true"), Options{Verbose: true})
	if err != nil || status != 0 {
		t.Fatalf("status %d, err %v", status, err)
	}
	last := -1
	for _, step := range []string{
		"jail: init: make init non-dumpable", "jail: init: bring up loopback", "jail: init: build the root filesystem",
		"jail: init: drop capabilities", "jail: init: apply landlock", "jail: init: install seccomp filter",
		"jail: init: exec /usr/bin/true",
	} {
		i := strings.Index(stderr, step)
		if i < 0 || i < last {
			t.Errorf("%q missing or out of order in:\n%s", step, stderr)
		}
		last = i
	}
}

// TestInitRefusesPlanForOtherNamespaces checks init runs no plan that asks for namespaces other
// than those it was started in, and did its prelude for.
func TestInitRefusesPlanForOtherNamespaces(t *testing.T) {
	spec := testSpec("true")
	started := spec.Namespaces
	started.Net = false
	signals := subscribe()
	sb, err := launchPinned(started, Stdio{}, signals) // as runSandbox: init dies with this thread
	if err != nil {
		t.Fatal(err)
	}
	defer sb.unpin()
	sb.begin(spec, &observer{spec: spec})
	sb.sendPlan(nil, nil)
	sb.letStart(false, nil)
	status, err := sb.wait()
	if status != fail.ExitSetup || err == nil || !strings.Contains(err.Error(), "the plan's namespaces are not init's") {
		t.Errorf("status %d, err %v; want init to refuse the plan", status, err)
	}
}

func TestUserNSRefused(t *testing.T) {
	for _, tc := range []struct {
		err          error
		capsStripped bool
		want         bool
	}{
		{&fail.Error{Op: opCreateNamespaces, Errno: syscall.EPERM, Exit: fail.ExitSetup}, false, true},
		{&fail.Error{Op: opCreateNamespaces, Errno: syscall.ENOSPC, Exit: fail.ExitSetup}, false, true},
		{&fail.Error{Op: opCreateNamespaces, Errno: syscall.ENOMEM, Exit: fail.ExitSetup}, false, false},
		{&fail.Error{Op: opMapIDs, Errno: syscall.EPERM, Exit: fail.ExitSetup}, false, true},
		// Inside, only an EPERM that a known restriction explains (AppArmor strips capabilities).
		{&fail.Error{Op: "build the root filesystem", Errno: syscall.EPERM, Exit: fail.ExitSetup}, true, true},
		{&fail.Error{Op: "build the root filesystem", Errno: syscall.EPERM, Exit: fail.ExitSetup}, false, false},
		// A container's masked /proc refuses a step, not the namespaces.
		{&fail.Error{Op: "proc", Path: "/proc", Errno: syscall.EPERM, Hint: "the container masks …", Exit: fail.ExitSetup}, false, false},
		{&fail.Error{Op: "exec", Path: "x", Errno: syscall.EPERM, Hint: "h", Exit: fail.ExitNotExecutable}, true, false},
		{errors.New("other"), true, false},
	} {
		if got := userNSRefused(tc.err, func() bool { return tc.capsStripped }); got != tc.want {
			t.Errorf("userNSRefused(%v), caps stripped %v = %v, want %v", tc.err, tc.capsStripped, got, tc.want)
		}
	}
}
