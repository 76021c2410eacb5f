package mount

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/testutil"
	"github.com/jail-sandbox/jail/jail/internal/placeholder"
	"github.com/jail-sandbox/jail/jail/internal/verbose"
	"github.com/jail-sandbox/jail/plan"
)

// The mount tests run SetupRoot for real, in a re-exec of the test binary, in two stages:
//
//	stage 1: new user + mount namespaces. Mounts a nosuid,nodev,noexec tmpfs under the fixture,
//	         so that in stage 2 it is a mount the kernel locks, as the host's are for jail.
//	stage 2: new user + mount + pid namespaces, as sandbox init has. Runs SetupRoot with the
//	         scenario's Spec, then the scenario's checks, each reporting one line on stdout.
//
// The stages are dispatched from init() rather than TestMain so the package's single TestMain
// stays free for whoever needs it.
const (
	envMountStage    = "JAIL_MOUNT_TEST_STAGE"
	envMountScenario = "JAIL_MOUNT_TEST_SCENARIO"
)

// lineTime is the time that ends each verbose line (verbose.Log).
var lineTime = regexp.MustCompile(` \(\+\d+\.\d\d ms\)$`)

func init() {
	switch os.Getenv(envMountStage) {
	case "1":
		os.Exit(mountStage1())
	case "2":
		os.Exit(mountStage2())
	}
}

// mountScenario is one run of SetupRoot: a hand-built Spec and what to check inside.
type mountScenario struct {
	Fixture  string    // host directory holding the test's files
	Submount string    // host directory stage 1 mounts a locked tmpfs on ("" for none)
	Spec     plan.Spec // the plan
	Verbose  bool      // SetupRoot logs each op
	// Made are host paths SetupRoot's made makes, as sockets, as the host makes placeholders
	// while the setup builds what comes before them; nil: made is nil.
	Made   []string
	Checks []string // names in mountChecks, run inside after SetupRoot
}

// Results reported by stage 2, one per line.
const (
	lineSetupError = "SETUP-ERROR "
	lineTook       = "TOOK "
	lineUnusable   = "NS-UNUSABLE "
	lineCheck      = "CHECK "
)

// mountRun is what the stages reported.
type mountRun struct {
	setupErr string            // SetupRoot's error, "" when it succeeded
	results  map[string]string // check name → "" for a pass, else what went wrong
	stderr   string            // the verbose log
	took     string            // how long SetupRoot took
}

// runMountScenario runs sc in the two stages. It skips when the kernel refuses user namespaces
// or lacks the new mount API (testutil.Require).
func runMountScenario(t *testing.T, sc mountScenario) mountRun {
	t.Helper()
	js, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Env = append(os.Environ(), envMountStage+"=1", envMountScenario+"="+string(js))
	cmd.SysProcAttr = nsAttr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exitErr *exec.ExitError
	switch {
	case err != nil && !errors.As(err, &exitErr):
		testutil.Require(t, false, "user namespaces (%v)", err)
		t.Fatalf("start stage 1: %v", err)
	case err != nil:
		t.Fatalf("stages failed: %v\n%s%s", err, out, stderr.String())
	}
	if msg, ok := strings.CutPrefix(string(out), lineUnusable); ok {
		testutil.Require(t, false, "a user namespace with mount rights (%s)", msg)
		t.Fatalf("user namespace without mount rights: %s", msg)
	}
	run := mountRun{results: map[string]string{}, stderr: stderr.String()}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if msg, ok := strings.CutPrefix(line, lineSetupError); ok {
			run.setupErr = msg
		} else if took, ok := strings.CutPrefix(line, lineTook); ok {
			run.took = took
		} else if rest, ok := strings.CutPrefix(line, lineCheck); ok {
			name, res, _ := strings.Cut(rest, "\t")
			run.results[name] = res
		}
	}
	if strings.Contains(run.setupErr, unix.ENOSYS.Error()) {
		testutil.Require(t, false, "the new mount API (%s)", run.setupErr)
	}
	return run
}

// nsAttr starts a process in new namespaces with the caller's uid and gid mapped to themselves.
// CAP_SYS_ADMIN is made ambient, as the launcher does, or an ordinary user's process would lose
// it at execve; so are CAP_DAC_OVERRIDE and CAP_FOWNER, which init's setup holds too and
// overlayfs needs at mount time (its work directory is mode 0).
func nsAttr(flags uintptr) *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	return &syscall.SysProcAttr{
		Cloneflags:  flags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_DAC_OVERRIDE, unix.CAP_FOWNER},
		Pdeathsig:   syscall.SIGKILL,
	}
}

// mountStage1 mounts the scenario's submount and runs stage 2 in new user, mount and pid
// namespaces.
func mountStage1() int {
	var sc mountScenario
	if err := json.Unmarshal([]byte(os.Getenv(envMountScenario)), &sc); err != nil {
		fmt.Fprintln(os.Stderr, "stage 1:", err)
		return 1
	}
	// A namespace whose capabilities a host restriction strips (Ubuntu's AppArmor
	// apparmor_restrict_unprivileged_userns) is created, but cannot mount.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fmt.Printf("%s%v\n", lineUnusable, err)
		return 0
	}
	if sc.Submount != "" {
		err := unix.Mount("tmpfs", sc.Submount, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755")
		if err == nil {
			err = os.WriteFile(filepath.Join(sc.Submount, "inside"), []byte("sub"), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "stage 1: submount:", err)
			return 1
		}
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Env = append(os.Environ(), envMountStage+"=2")
	cmd.SysProcAttr = nsAttr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "stage 2:", err)
		return 1
	}
	return 0
}

// mountStage2 runs SetupRoot and the checks, reporting each on stdout.
func mountStage2() int {
	var sc mountScenario
	if err := json.Unmarshal([]byte(os.Getenv(envMountScenario)), &sc); err != nil {
		fmt.Fprintln(os.Stderr, "stage 2:", err)
		return 1
	}
	start := time.Now()
	r, err := OpenRoots()
	if err == nil {
		err = SetupRoot(&sc.Spec, r, verbose.New(sc.Verbose, 0), hostMakes(r, sc.Made))
	}
	took := time.Since(start)
	if err != nil {
		fmt.Printf("%s%s\n", lineSetupError, err)
		return 0
	}
	fmt.Printf("%s%v\n", lineTook, took)
	for _, name := range sc.Checks {
		res := "unknown check"
		check, ok := mountChecks[name]
		for _, set := range []map[string]func(string) error{slashChecks, overlayChecks} {
			if !ok {
				check, ok = set[name]
			}
		}
		if ok {
			res = ""
			if err := check(sc.Fixture); err != nil {
				res = err.Error()
			}
		}
		fmt.Printf("%s%s\t%s\n", lineCheck, name, strings.ReplaceAll(res, "\n", " "))
	}
	return 0
}

// hostMakes is SetupRoot's made for a scenario: it says so on stderr, among the verbose lines,
// and makes paths on the host's tree, as the host makes its placeholders. Nil without paths.
func hostMakes(r *Roots, paths []string) func() error {
	if paths == nil {
		return nil
	}
	return func() error {
		fmt.Fprintln(os.Stderr, "jail: made")
		for _, p := range paths {
			if err := unix.Mknodat(r.host, p[1:], unix.S_IFSOCK|0o644, 0); err != nil {
				return err
			}
		}
		return nil
	}
}

// newFixture makes the host files the scenarios bind, under a physical temporary path.
func newFixture(t *testing.T) string {
	t.Helper()
	f, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"ro/sub", "rw/.git/hooks", "rw/secret", "outside"} {
		if err := os.MkdirAll(filepath.Join(f, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{
		"ro/file": "ro", "rw/.git/config": "[core]", "rw/secret/key": "s3cret", "rw/token": "tok",
	} {
		if err := os.WriteFile(filepath.Join(f, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// TestSetupRoot builds a sandbox root with every kind of op and attacks it from inside.
func TestSetupRoot(t *testing.T) {
	f := newFixture(t)
	rw := f + "/rw"
	m := func(kind plan.MountKind, source, target string) plan.Mount {
		return plan.Mount{Kind: kind, Source: source, Target: target}
	}
	sc := mountScenario{
		Fixture:  f,
		Verbose:  true,
		Submount: f + "/ro/sub",
		Spec: plan.Spec{
			Env:    []string{"HOME=" + homeDir},
			Limits: plan.Limits{Tmpfs: 64 << 20},
			Mounts: []plan.Mount{
				m(plan.MountSymlink, "usr/bin", "/bin"),
				m(plan.MountDev, "", "/dev"),
				m(plan.MountProc, "", "/proc"),
				m(plan.MountROBind, f+"/ro", roDir),
				m(plan.MountTmpfs, "", "/tmp"),
				m(plan.MountTmpfs, "", homeDir),
				m(plan.MountDir, "", "/work/empty"),
				m(plan.MountBind, rw, rw),
				m(plan.MountBind, rw+"/.git", rw+"/.git"), // pins .git: it cannot be renamed away
				m(plan.MountProtect, rw+"/.git/config", rw+"/.git/config"),
				m(plan.MountProtect, rw+"/.git/hooks", rw+"/.git/hooks"),
				{Kind: plan.MountProtect, Source: rw + "/.envrc", Target: rw + "/.envrc", Create: true},
				{Kind: plan.MountProtect, Source: rw + "/.vscode", Target: rw + "/.vscode", Create: true, IsDir: true},
				// A missing directory above a protected path: created and pinned by a self-bind.
				{Kind: plan.MountBind, Source: rw + "/.jj", Target: rw + "/.jj", Create: true, IsDir: true},
				{Kind: plan.MountProtect, Source: rw + "/.jj/repo", Target: rw + "/.jj/repo", Create: true, IsDir: true},
				{Kind: plan.MountHideDir, Target: rw + "/secret", IsDir: true},
				m(plan.MountHideFile, "", rw+"/token"),
			},
		},
	}
	// The host makes the placeholders, and removes them once the sandbox is gone.
	held, err := placeholder.Take(sc.Spec.Mounts)
	if err != nil {
		t.Fatal(err)
	}
	run := runChecks(t, sc, mountChecks)
	held.Release()
	t.Logf("setupRoot with %d ops took %s", len(sc.Spec.Mounts), run.took)
	t.Run("verbose logs one line per op", func(t *testing.T) {
		var want []string
		for _, m := range sc.Spec.Mounts {
			want = append(want, fmt.Sprintf("jail: %s %s", m.Kind, Object(m)))
		}
		wantLog(t, run.stderr, want)
	})
	// What the sandbox did to the host through its grants.
	t.Run("host sees the write through the bind", func(t *testing.T) {
		if err := wantContent(rw+"/written", "from inside"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("host keeps no placeholder but what the sandbox wrote into", func(t *testing.T) {
		for _, p := range []string{rw + "/.envrc", rw + "/.vscode", rw + "/.jj/repo"} {
			if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: %v; want it removed", p, err)
			}
		}
		if err := wantContent(rw+"/.jj/writable", "x"); err != nil { // the pinned directory held a file
			t.Error(err)
		}
	})
	t.Run("host files under masks are untouched", func(t *testing.T) {
		for p, want := range map[string]string{rw + "/secret/key": "s3cret", rw + "/token": "tok", rw + "/.git/config": "[core]"} {
			if err := wantContent(p, want); err != nil {
				t.Error(err)
			}
		}
	})
}

// TestSetupRootWaitsForPlaceholders checks that SetupRoot calls made once, after the ops before
// the first protection of a missing path and before that one, which then sits on what made made.
func TestSetupRootWaitsForPlaceholders(t *testing.T) {
	f := newFixture(t)
	rw := rwDir(f)
	missing := func(name string) plan.Mount {
		return plan.Mount{Kind: plan.MountProtect, Source: rw + "/" + name, Target: rw + "/" + name, Create: true}
	}
	sc := mountScenario{
		Fixture: f,
		Verbose: true,
		Made:    []string{rw + "/.envrc", rw + "/.mcp.json"},
		Spec: plan.Spec{Limits: plan.Limits{Tmpfs: 1 << 20}, Mounts: []plan.Mount{
			{Kind: plan.MountTmpfs, Target: "/tmp"},
			{Kind: plan.MountBind, Source: rw, Target: rw},
			{Kind: plan.MountProtect, Source: rw + "/.git/config", Target: rw + "/.git/config"},
			missing(".envrc"),
			missing(".mcp.json"),
			{Kind: plan.MountTmpfs, Target: "/var/tmp"},
		}},
	}
	run := runChecks(t, sc, map[string]func(string) error{
		"missing protected file cannot be created": mountChecks["missing protected file cannot be created"],
	})
	var want []string
	for i, m := range sc.Spec.Mounts {
		if i == 2 { // the first protection: the host holds even one of a path that exists
			want = append(want, "jail: made")
		}
		want = append(want, fmt.Sprintf("jail: %s %s", m.Kind, Object(m)))
	}
	wantLog(t, run.stderr, want)
}

// wantLog fails t unless the verbose log stderr is the lines want, times aside.
func wantLog(t *testing.T, stderr string, want []string) {
	t.Helper()
	got := strings.Split(strings.TrimSpace(stderr), "\n")
	for i, line := range got {
		got[i] = lineTime.ReplaceAllString(line, "")
	}
	if !slices.Equal(got, want) {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, strings.Join(want, "\n"))
	}
}

// TestSetupRootRefusesSymlinks plants a symlink where an op's target (or a bind's source) lies
// and checks the op fails with ELOOP instead of following it out to the host.
func TestSetupRootRefusesSymlinks(t *testing.T) {
	for _, tc := range []struct {
		name string
		link string // path of the planted symlink, relative to the fixture, pointing to outside/
		op   func(f string) plan.Mount
	}{
		{"tmpfs beneath a symlinked dir", "rw/link", func(f string) plan.Mount {
			return plan.Mount{Kind: plan.MountTmpfs, Target: f + "/rw/link/x"}
		}},
		{"bind on a symlink", "rw/link", func(f string) plan.Mount {
			return plan.Mount{Kind: plan.MountROBind, Source: f + "/ro", Target: f + "/rw/link"}
		}},
		{"bind from a symlink", "rw/link", func(f string) plan.Mount {
			return plan.Mount{Kind: plan.MountBind, Source: f + "/rw/link", Target: "/x"}
		}},
		{"protect a missing path that became a symlink", "rw/.envrc", func(f string) plan.Mount {
			return plan.Mount{Kind: plan.MountProtect, Source: f + "/rw/.envrc", Target: f + "/rw/.envrc", Create: true}
		}},
		{"hide-file on a symlink", "rw/token", func(f string) plan.Mount {
			return plan.Mount{Kind: plan.MountHideFile, Target: f + "/rw/token"}
		}},
		{"hide-dir on a symlink", "rw/secret", func(f string) plan.Mount {
			return plan.Mount{Kind: plan.MountHideDir, Target: f + "/rw/secret", IsDir: true}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			link := filepath.Join(f, tc.link)
			if err := os.RemoveAll(link); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(f+"/outside", link); err != nil {
				t.Fatal(err)
			}
			op := tc.op(f)
			sc := mountScenario{Fixture: f, Spec: plan.Spec{Limits: plan.Limits{Tmpfs: 1 << 20}, Mounts: []plan.Mount{
				{Kind: plan.MountBind, Source: f + "/rw", Target: f + "/rw"}, op,
			}}}
			setupErr := runMountScenario(t, sc).setupErr
			want := fmt.Sprintf("%s %s", op.Kind, Object(op))
			if !strings.Contains(setupErr, want) || !strings.Contains(setupErr, unix.ELOOP.Error()) {
				t.Errorf("setupRoot error %q; want it to name %q and ELOOP", setupErr, want)
			}
			if ents, err := os.ReadDir(f + "/outside"); err != nil || len(ents) != 0 {
				t.Errorf("the symlink's destination changed: %v, %v", ents, err)
			}
		})
	}
}

// runChecks runs sc with every check of checks and turns each result into a subtest.
func runChecks(t *testing.T, sc mountScenario, checks map[string]func(string) error) mountRun {
	t.Helper()
	sc.Checks = slices.Sorted(maps.Keys(checks))
	run := runMountScenario(t, sc)
	if run.setupErr != "" {
		t.Fatalf("setupRoot: %s", run.setupErr)
	}
	for _, name := range sc.Checks {
		t.Run(name, func(t *testing.T) {
			res, ok := run.results[name]
			switch {
			case !ok:
				t.Fatal("no result: the sandbox died before this check")
			case res != "":
				t.Fatal(res)
			}
		})
	}
	return run
}

// TestSetupRootOnSlash binds a directory on / itself and checks that later ops land on that
// mount, not on the tmpfs it covers.
func TestSetupRootOnSlash(t *testing.T) {
	f := newFixture(t)
	sc := mountScenario{Fixture: f, Spec: plan.Spec{Limits: plan.Limits{Tmpfs: 1 << 20}, Mounts: []plan.Mount{
		{Kind: plan.MountROBind, Source: f + "/ro", Target: "/"},
		{Kind: plan.MountTmpfs, Target: "/sub"},
		{Kind: plan.MountHideFile, Target: "/file"},
	}}}
	runChecks(t, sc, slashChecks)
}

// TestSetupRootErrors checks that a failed op names itself, its paths, the step and the errno
// in one line.
func TestSetupRootErrors(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name string
		op   plan.Mount
		want string
	}{
		{"missing source", plan.Mount{Kind: plan.MountROBind, Source: f + "/nope", Target: "/x"},
			"ro-bind " + f + "/nope on /x: open source " + f + "/nope: no such file or directory"},
		{"missing hide target", plan.Mount{Kind: plan.MountHideFile, Target: "/nope"},
			"hide-file /nope: open /nope: no such file or directory"},
		{"file where a directory is wanted", plan.Mount{Kind: plan.MountTmpfs, Target: f + "/ro/file"},
			"tmpfs " + f + "/ro/file: open " + f + "/ro/file: not a directory"},
		{"target beneath a read-only bind", plan.Mount{Kind: plan.MountDir, Target: f + "/ro/new"},
			"dir " + f + "/ro/new: create " + f + "/ro/new: read-only file system"},
		{"relative target", plan.Mount{Kind: plan.MountDir, Target: "x/../y"},
			`dir x/../y: path "x/../y" is not absolute and clean: invalid argument`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := mountScenario{Fixture: f, Spec: plan.Spec{Limits: plan.Limits{Tmpfs: 1 << 20}, Mounts: []plan.Mount{
				{Kind: plan.MountROBind, Source: f + "/ro", Target: f + "/ro"}, tc.op,
			}}}
			if got := runMountScenario(t, sc).setupErr; got != tc.want {
				t.Errorf("setupRoot error\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
