package main

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// jail starts the sandbox's init before it loads the profile, guessing the namespaces from the
// command line: for `jail [OPTIONS] -- COMMAND` before its own Go runtime starts
// (jail/internal/spawn/spawn_early.c), otherwise once it has parsed its flags. These runs check
// both happen and that the guess never decides the sandbox: a profile that asks for the host's
// network gets it, without the guessed network namespace, and one that fails to load leaves nothing
// behind but its one-line error.

func TestEarlyInitStartsBeforeTheRuntime(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		log  string
	}{
		{[]string{"-v", "--", "true"}, "init started early, before jail's own runtime (namespaces user,mount,pid,ipc,uts,net,cgroup)"},
		{[]string{"-v", "--net=host", "--", "true"}, "init started early, before jail's own runtime (namespaces user,mount,pid,ipc,uts,cgroup)"},
		{[]string{"-v", "-p", "agent", "true"}, "init started early (namespaces user,mount,pid,ipc,uts,net,cgroup)"},
	} {
		_, errOut, code := runJailIn(t, dir, "", c.args...)
		if code != 0 || !strings.Contains(errOut, c.log) {
			t.Errorf("jail %s: exit %d, want %q in the log:\n%s", strings.Join(c.args, " "), code, c.log, errOut)
		}
	}
}

func TestEarlyInitFollowsTheProfilesNetwork(t *testing.T) {
	hostNet, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	profile := filepath.Join(dir, "hostnet.toml")
	testutil.WriteFile(t, profile, "extends = [\"agent\"]\n[network]\nmode = \"host\"\n")
	netns := []string{"readlink", "/proc/self/ns/net"}
	out, errOut, code := runJailIn(t, dir, "", append([]string{"-v", "-p", profile, "--"}, netns...)...)
	if code != 0 || strings.TrimSpace(out) != hostNet {
		t.Fatalf("mode = \"host\" from a profile file: network namespace %q (exit %d, %s), want the host's %q", out, code, errOut, hostNet)
	}
	if !strings.Contains(errOut, "does not fit the init started early") {
		t.Errorf("no sign of a second init in -v's log:\n%s", errOut)
	}
	out, errOut, code = runJailIn(t, dir, "", append([]string{"--net", "host", "-v", "--"}, netns...)...)
	if code != 0 || strings.TrimSpace(out) != hostNet || !strings.Contains(errOut, "init started early") {
		t.Fatalf("--net host: network namespace %q (exit %d, %s), want the host's from the early init", out, code, errOut)
	}
	out, errOut, code = runJailIn(t, dir, "", append([]string{"--"}, netns...)...)
	if code != 0 || !strings.HasPrefix(out, "net:[") || strings.TrimSpace(out) == hostNet {
		t.Fatalf("agent: network namespace %q (exit %d, %s), want one of its own", out, code, errOut)
	}
}

func TestEarlyInitOfABadProfileLeavesOnlyTheError(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join(dir, "bad.toml")
	testutil.WriteFile(t, profile, "extends = [\"agent\"]\nbogus = 1\n")
	out, errOut, code := runJailIn(t, dir, "", "-p", profile, "--", "sh", "-c", "echo ran")
	if code != 125 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "bogus") {
		t.Fatalf("bad profile: exit %d, stdout %q, stderr %q; want 125 and one line naming the key", code, out, errOut)
	}
}

// TestEarlyInitWithClosedStdio: a caller may start jail with descriptors 0 and 1 closed. The
// early start must then not put its own pipes there (init once held its plan's pipe as stdout
// and waited forever for it to end); the command gets /dev/null, as Go gives jail itself.
func TestEarlyInitWithClosedStdio(t *testing.T) {
	o := runOpts{dir: t.TempDir(), wrap: []string{"sh", "-c", `exec "$0" "$@" <&- >&-`}}
	_, errOut, code := runJailWith(t, o, "--", "sh", "-c", `[ "$(readlink /proc/self/fd/0)" = /dev/null ]`)
	if code != 0 {
		t.Fatalf("stdin and stdout closed: exit %d (%s), want 0 with /dev/null as stdin", code, errOut)
	}
}

// TestEarlyInitShowsNoneOfJailsCommandLine checks the init started before the runtime, a fork of
// jail rather than an executed program, shows the command (in /proc/1, world-readable) jail-init
// as its command line and name, as an executed init's argv, not jail's with its options.
func TestEarlyInitShowsNoneOfJailsCommandLine(t *testing.T) {
	out, errOut, code := runJailIn(t, t.TempDir(), "", "--env", "SECRET=hunter2", "--",
		"sh", "-c", "cat /proc/1/cmdline; echo; cat /proc/1/comm")
	cmdline, comm, _ := strings.Cut(out, "\n")
	if code != 0 || strings.TrimRight(cmdline, "\x00") != "jail-init" || comm != "jail-init\n" {
		t.Errorf("init's command line and name %q (exit %d, %s), want jail-init's", out, code, errOut)
	}
}

// TestEarlyInitIsOutOfReach: the forked init's memory and environment (its copy of jail's, with
// whatever jail's caller had in it) stay unreadable to the command, and it cannot be killed from
// inside. Two things refuse the reads, each alone: init is non-dumpable, and it holds
// capabilities the command does not (the kernel lets no process read one that has more); the
// kill is refused because init is the pid namespace's init.
func TestEarlyInitIsOutOfReach(t *testing.T) {
	out, errOut, code := runJailWith(t, runOpts{dir: t.TempDir(), env: []string{"JAIL_TEST_SECRET=hunter2"}}, "--", "sh", "-c",
		`for f in environ maps mem; do head -c 64 /proc/1/$f >/dev/null 2>&1 && echo "$f readable"; done
		kill -KILL 1 2>/dev/null; sleep 0.1; echo alive`)
	if code != 0 || out != "alive\n" {
		t.Errorf("inside: %q (exit %d, %s), want init's memory and environment unreadable and the sandbox alive after kill -KILL 1", out, code, errOut)
	}
}

// findSetup is sh that sets $setup to the pid of init's setup, if it runs: the process named
// jail-init that is not pid 1.
const findSetup = `for d in /proc/[0-9]*; do read -r c 2>/dev/null <$d/comm && [ "$c" = jail-init ] && [ "$d" != /proc/1 ] && setup=${d#/proc/}; done`

// TestStayingSetupIsOutOfReach: init's setup, which stays beside the command for -v (or a
// terminal, --explain, a persistent sandbox's egress ports), is as far out of the command's reach
// as pid 1. It is
// non-dumpable, so its memory and environment are unreadable. It is not pid 1, and shares the
// command's uid, so only Landlock's signal scope (ABI 6) refuses its kill: the thread that
// restricted itself and started the command must not be the setup's leader, whose domain the
// kernel checks.
func TestStayingSetupIsOutOfReach(t *testing.T) {
	script := findSetup + `
		[ -n "$setup" ] || { echo "no setup"; exit 1; }
		for f in environ maps mem; do head -c 64 /proc/$setup/$f >/dev/null 2>&1 && echo "$f readable"; done
		kill -STOP $setup 2>/dev/null && echo "stop sent"; kill -KILL $setup 2>/dev/null && echo "kill sent"; echo done`
	args := append(setupStays(), "--", "sh", "-c", script)
	out, errOut, code := runJailWith(t, runOpts{dir: t.TempDir(), env: []string{"JAIL_TEST_SECRET=hunter2"}}, args...)
	if code != 0 || strings.Contains(out, "readable") || strings.Contains(out, "no setup") {
		t.Fatalf("inside: %q (exit %d, %s), want the setup found and its memory and environment unreadable", out, code, errOut)
	}
	requireLandlock(t, 6)
	if out != "done\n" {
		t.Errorf("inside: %q (exit %d, %s), want the setup's stop and kill refused", out, code, errOut)
	}
}

// TestEarlyInitKnowsEveryFlag ties spawn_early.c's option table to the run flag set: jail's
// constructor parses argv in C, before Go's flag package can, to decide whether to fork init
// before the runtime and in which namespaces. Every flag of the set runs here once, as
// `jail -v FLAG [VALUE] -- true`, and the init must have started before the runtime in the
// namespaces the plan asks for (a flag the table lacks, or whose value it does not skip, starts
// it only after the runtime; --net host in the wrong namespaces). With --dry-run no init may
// start at all: jail reads its profile from a FIFO here, and its children are looked at while
// it waits. --help and --version print and exit before anything can be seen: the table must
// mark them as --dry-run is.
func TestEarlyInitKnowsEveryFlag(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFile(t, filepath.Join(dir, "secret"), "s\n")
	values := map[string]string{ // a value each option that takes one is given, as a run would
		"p": "agent", "profile": "agent", "ro": "/usr", "rw": dir, "hide": filepath.Join(dir, "secret"),
		"tmpfs": filepath.Join(dir, "tmp"), "net": "host", "allow-host": "example.com", "env": "FOO=1",
		"cwd": dir, "timeout": "1m", "fallback": "landlock", "report": filepath.Join(dir, "report.json"),
		"json-status-fd": "2", "cache": "go", "workspace": "bind",
	}
	noCommand := map[string]bool{"dry-run": true, "h": true, "help": true, "version": true}
	fs, _ := newRunFlagSet()
	fs.VisitAll(func(f *flag.Flag) {
		if noCommand[f.Name] {
			return
		}
		args, ok := flagArgs(t, f, values, "-v")
		if !ok {
			return
		}
		_, errOut, code := runJailIn(t, dir, "", append(args, "--", "true")...)
		if code != 0 || !strings.Contains(errOut, "init started early, before jail's own runtime") || strings.Contains(errOut, "does not fit") {
			t.Errorf("jail %s -- true: exit %d; want init started before the runtime, in the plan's namespaces "+
				"(does spawn_early.c's option table know --%s?):\n%s", strings.Join(args, " "), code, f.Name, errOut)
		}
	})
	for name := range noCommand {
		if fs.Lookup(name) == nil {
			t.Errorf("--%s is no longer one of jail's flags: drop it here and from spawn_early.c's table", name)
		}
	}

	cmd, fifo := startReadingProfile(t, dir, "--dry-run", "--", "true")
	profile := openFIFOWriter(t, fifo) // jail, or a host it forked, reads its profile now
	if children := jailChildren(t, cmd.Process.Pid); len(children) != 0 {
		t.Errorf("jail --dry-run -- true started %v", children)
	}
	profile.WriteString("extends = [\"agent\"]\n")
	profile.Close()
}

// startReadingProfile starts jail with args in dir and its profile from a FIFO, which it returns:
// jail waits, reading it, until the test writes one (openFIFOWriter). jail is killed at the end
// of the test.
func startReadingProfile(t *testing.T, dir string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	fifo := filepath.Join(dir, "profile.toml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(jailBin, append([]string{"-p", fifo}, args...)...)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, fifo
}

// flagArgs is the flag f on a command line after before: --NAME, and its sample value from values
// when it takes one; ok is false (and t fails) when it takes one values has no sample of.
func flagArgs(t *testing.T, f *flag.Flag, values map[string]string, before ...string) (args []string, ok bool) {
	t.Helper()
	args = append(before, "--"+f.Name)
	if b, isBool := f.Value.(interface{ IsBoolFlag() bool }); isBool && b.IsBoolFlag() {
		return args, true
	}
	v, ok := values[f.Name]
	if !ok {
		t.Errorf("--%s takes a value this test has no sample of: add one, and the option to spawn_early.c's table", f.Name)
	}
	return append(args, v), ok
}

// openFIFOWriter opens the FIFO at path for writing once a reader (jail, reading its profile) has
// it open, waiting at most hangTimeout for one.
func openFIFOWriter(t *testing.T, path string) *os.File {
	t.Helper()
	for deadline := time.Now().Add(hangTimeout); ; {
		f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			return f
		}
		if !errors.Is(err, syscall.ENXIO) || time.Now().After(deadline) {
			t.Fatalf("open %s for writing: %v (no jail reads it)", path, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestEarlyBootLeavesTheEnvironmentAsItWas: the runtimes of a run boot with one P, the caller's
// last environment entry lent to GOMAXPROCS=1 meanwhile (jail/internal/spawn/boot.c). The
// command gets that entry back and no GOMAXPROCS unless the caller set one; a GO entry last is
// not lent (the runtime still reads GODEBUG: here its scheduler trace); and a host that stays
// for the run (here for --report) gets the default number of Ps back.
func TestEarlyBootLeavesTheEnvironmentAsItWas(t *testing.T) {
	own, set := os.LookupEnv("GOMAXPROCS")
	want := "JAIL_TEST_LAST=last\n"
	if set {
		want = "GOMAXPROCS=" + own + "\n" + want
	}
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"JAIL_TEST_LAST=last"}, want},
		{[]string{"GOMAXPROCS=3", "JAIL_TEST_LAST=last"}, "GOMAXPROCS=3\nJAIL_TEST_LAST=last\n"},
	} {
		out, errOut, code := runJailWith(t, runOpts{dir: t.TempDir(), env: c.env}, "--env", "GOMAXPROCS", "--env", "JAIL_TEST_LAST", "--",
			"sh", "-c", "env | grep -E '^(GOMAXPROCS|JAIL_TEST_LAST)=' | sort")
		if code != 0 || out != c.want {
			t.Errorf("caller's environment ending %q: the command's %q (exit %d, %s), want %q", c.env, out, code, errOut, c.want)
		}
	}
	// The runtime's scheduler trace names a process's Ps at its start and every 100 ms after.
	// The host's and the setup's lines at their start interleave on stderr, piece by piece; the
	// later ones are the host's alone (the setup has left).
	dir := t.TempDir()
	later := regexp.MustCompile(`SCHED [1-9][0-9]*ms: gomaxprocs=([0-9]+) `)
	_, errOut, code := runJailWith(t, runOpts{dir: dir, env: []string{"GODEBUG=schedtrace=100", "JAIL_TEST_LAST=last"}},
		"--report", filepath.Join(dir, "report.json"), "--", "sleep", "0.5")
	if m := later.FindStringSubmatch(errOut); code != 0 || m == nil || m[1] != strconv.Itoa(runtime.GOMAXPROCS(0)) {
		t.Errorf("a host that stays: exit %d, scheduler trace %s; want the default number of Ps, %d", code, errOut, runtime.GOMAXPROCS(0))
	}
	_, errOut, code = runJailWith(t, runOpts{dir: dir, env: []string{"GODEBUG=schedtrace=100"}}, "--", "true")
	if code != 0 || !strings.Contains(errOut, "SCHED ") {
		t.Errorf("an environment ending in GODEBUG: exit %d, stderr %s; want the runtime to have read it (a scheduler trace)", code, errOut)
	}
}
