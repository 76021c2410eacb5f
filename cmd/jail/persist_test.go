package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/internal/testutil"
	"github.com/jail-sandbox/jail/jail/client"
)

// Persistent sandboxes from the command line: create, exec, ls, inspect, cp, rm, prune.

// TestPersistentSandboxKeepsStateBetweenExecs: files written anywhere writable stay, and a
// background process one exec starts runs on for the next.
func TestPersistentSandboxKeepsStateBetweenExecs(t *testing.T) {
	proj := t.TempDir()
	id := createSandbox(t, proj)
	mustExec(t, id, "echo home > ~/h; echo tmp > /tmp/t; echo proj > out.txt")
	pid := strings.TrimSpace(mustExec(t, id, "sleep 300 >/dev/null 2>&1 & echo $!"))
	if got := mustExec(t, id, "cat ~/h /tmp/t out.txt; kill -0 "+pid+" && echo running"); got != "home\ntmp\nproj\nrunning\n" {
		t.Errorf("second exec sees %q, want the first's files and its background process", got)
	}
	if got := readFile(t, filepath.Join(proj, "out.txt")); got != "proj\n" {
		t.Errorf("the working directory on the host holds %q", got)
	}
	// One sandbox: the same pid namespace, hostname and /tmp for every exec.
	if a, b := sandboxPidNS(t, id), sandboxPidNS(t, id); a != b {
		t.Errorf("two execs in two pid namespaces: %s, %s", a, b)
	}
}

func TestExecExitStatuses(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFile(t, filepath.Join(dir, "noexec"), "#!/bin/sh\n")
	id := createSandbox(t, dir)
	for _, tc := range []struct {
		argv []string
		code int
		err  string
	}{
		{[]string{"sh", "-c", "exit 3"}, 3, ""},
		{[]string{"sh", "-c", "kill -9 $$"}, 137, ""},
		{[]string{"nosuchcommand"}, 127, "jail: exec nosuchcommand: no such file or directory (not found inside the sandbox; is its directory granted?)"},
		{[]string{"./noexec"}, 126, "jail: exec ./noexec: permission denied"},
		{[]string{"--timeout", "100ms", id, "--", "sleep", "30"}, 124, "jail: timeout: killed the command after 100ms"},
	} {
		args := append([]string{"exec", id, "--"}, tc.argv...)
		if tc.argv[0] == "--timeout" {
			args = append([]string{"exec"}, tc.argv...)
		}
		_, errOut, code := runJailIn(t, dir, "", args...)
		if code != tc.code || !strings.Contains(errOut, tc.err) {
			t.Errorf("jail %s: exit %d, stderr %q; want %d and %q", strings.Join(args, " "), code, errOut, tc.code, tc.err)
		}
	}
	if _, errOut, code := runJail(t, "exec", "jb_000000000000", "--", "true"); code != 125 || !strings.Contains(errOut, "no such sandbox") {
		t.Errorf("exec in no sandbox: exit %d, %q; want 125 and no such sandbox", code, errOut)
	}
}

// TestExecStdio: -i passes stdin (else /dev/null), stdout and stderr stay apart, --cwd and
// --env apply, and the command's stdio is the caller's own descriptors (nothing relays them).
func TestExecStdio(t *testing.T) {
	dir := t.TempDir()
	id := createSandbox(t, dir, "--env", "FROM_CREATE=1")
	out, errOut, code := runJailIn(t, dir, "piped\n", "exec", "-i", "--cwd", "/tmp", "--env", "FROM_EXEC=2", id, "--",
		"sh", "-c", `cat; pwd; echo "$FROM_CREATE $FROM_EXEC"; echo oops >&2; readlink /proc/self/fd/0`)
	if code != 0 || !strings.HasPrefix(out, "piped\n/tmp\n1 2\npipe:[") || errOut != "oops\n" {
		t.Errorf("exec -i: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, _, _ = runJailIn(t, dir, "ignored\n", "exec", id, "--", "sh", "-c", "cat; readlink /proc/self/fd/0")
	if out != "/dev/null\n" {
		t.Errorf("exec without -i: %q, want stdin /dev/null", out)
	}
}

// TestExecTerminal: -t gives the command a pseudo-terminal of the sandbox's own devpts, relayed.
func TestExecTerminal(t *testing.T) {
	id := createSandbox(t, t.TempDir())
	out, errOut, code := runJail(t, "exec", "-t", id, "--", "sh", "-c", "tty; test -t 1 && echo terminal")
	if code != 0 || !strings.HasPrefix(out, "/dev/pts/") || !strings.Contains(out, "terminal") {
		t.Errorf("exec -t: exit %d, %q, %s", code, out, errOut)
	}
}

// TestExecPassesSignals: a signal jail exec gets reaches the command, whose status it exits with.
func TestExecPassesSignals(t *testing.T) {
	id := createSandbox(t, t.TempDir())
	cmd := exec.Command(jailBin, "exec", id, "--", "sh", "-c", `trap 'echo got TERM; exit 42' TERM; echo ready; while :; do sleep 0.05; done`)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(stdout, buf); err != nil || string(buf) != "ready\n" {
		t.Fatalf("the command did not start: %q, %v", buf, err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	rest, _ := io.ReadAll(stdout)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 42 || string(rest) != "got TERM\n" {
		t.Errorf("after SIGTERM to jail exec: exit %d, %q; want 42 and the command's trap", code, rest)
	}
}

// TestExecKilledKillsTheCommand: when jail exec dies, its command's process group dies too.
func TestExecKilledKillsTheCommand(t *testing.T) {
	id := createSandbox(t, t.TempDir())
	cmd := exec.Command(jailBin, "exec", id, "--", "sh", "-c", "echo ready; sleep 300")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.ReadFull(stdout, make([]byte, 6))
	cmd.Process.Kill()
	cmd.Wait()
	eventually(t, "the command of a killed jail exec ends", func() bool {
		return !strings.Contains(mustExec(t, id, "ps -eo comm 2>/dev/null || true"), "sleep")
	})
}

func TestLsInspectNamesLabels(t *testing.T) {
	dir := t.TempDir()
	id := createSandbox(t, dir, "--name", "ls-test", "--label", "owner=tests", "--label", "kind=ls", "--idle-timeout", "1h", "--ttl", "2h")
	out, errOut, code := runJail(t, "ls")
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "ls-test") || !strings.Contains(out, "running") {
		t.Errorf("jail ls: exit %d, %q, %s", code, out, errOut)
	}
	mustExec(t, "ls-test", "sleep 300 >/dev/null 2>&1 &")
	out, errOut, code = runJail(t, "inspect", "ls-test")
	var sb api.Sandbox
	if code != 0 || json.Unmarshal([]byte(out), &sb) != nil {
		t.Fatalf("jail inspect: exit %d, %q, %s", code, out, errOut)
	}
	if sb.ID != id || sb.Name != "ls-test" || sb.Labels["owner"] != "tests" || sb.State != api.StateRunning ||
		sb.Profile != "agent" || sb.Workdir != dir || sb.IdleTimeout != api.Duration(time.Hour) || sb.ExpiresAt == nil ||
		sb.LastUsedAt == nil || !strings.HasSuffix(sb.Socket, "/api.sock") {
		t.Errorf("jail inspect: %+v", sb)
	}
	// The exec's command ended; what it left behind is not one of jail's processes.
	if len(sb.Processes) != 0 {
		t.Errorf("processes: %+v, want none running", sb.Processes)
	}
	// A name is unique among live sandboxes.
	_, errOut, code = runJailIn(t, dir, "", "create", "--name", "ls-test")
	if code != 125 || !strings.Contains(errOut, `name "ls-test": a sandbox has it`) {
		t.Errorf("a second create --name ls-test: exit %d, %q", code, errOut)
	}
	_, errOut, code = runJailIn(t, dir, "", "create", "--name", "jb_x")
	if code != 125 || !strings.Contains(errOut, "name \"jb_x\"") {
		t.Errorf("create --name jb_x: exit %d, %q", code, errOut)
	}
}

func TestCopyInAndOut(t *testing.T) {
	id := createSandbox(t, t.TempDir())
	src := t.TempDir()
	testutil.WriteFile(t, filepath.Join(src, "tree", "a.txt"), "a\n")
	testutil.WriteFile(t, filepath.Join(src, "tree", "sub", "b.txt"), "b\n")
	testutil.WriteFile(t, filepath.Join(src, "single"), "one\n")
	for _, args := range [][]string{
		{"cp", filepath.Join(src, "tree"), id + ":/tmp"},           // into a directory
		{"cp", filepath.Join(src, "single"), id + ":/tmp/renamed"}, // as a new name
	} {
		if _, errOut, code := runJail(t, args...); code != 0 {
			t.Fatalf("jail %s: exit %d, %s", strings.Join(args, " "), code, errOut)
		}
	}
	if got := mustExec(t, id, "cat /tmp/tree/a.txt /tmp/tree/sub/b.txt /tmp/renamed"); got != "a\nb\none\n" {
		t.Errorf("copied in: %q", got)
	}
	dst := t.TempDir()
	for _, args := range [][]string{{"cp", id + ":/tmp/tree", dst}, {"cp", id + ":/tmp/renamed", filepath.Join(dst, "back")}} {
		if _, errOut, code := runJail(t, args...); code != 0 {
			t.Fatalf("jail %s: exit %d, %s", strings.Join(args, " "), code, errOut)
		}
	}
	if got := readFile(t, filepath.Join(dst, "tree", "sub", "b.txt")) + readFile(t, filepath.Join(dst, "back")); got != "b\none\n" {
		t.Errorf("copied out: %q", got)
	}
	// - is a tar stream, both ways.
	out, _, code := runJail(t, "cp", id+":/tmp/tree", "-")
	if code != 0 || !strings.Contains(out, "tree/sub/b.txt") {
		t.Errorf("cp ID:PATH -: exit %d, %d bytes", code, len(out))
	}
	if _, errOut, code := runJailIn(t, t.TempDir(), out, "cp", "-", id+":/tmp/again"); code != 0 {
		t.Errorf("cp - ID:PATH: exit %d, %s", code, errOut)
	}
	if got := mustExec(t, id, "cat /tmp/again/tree/a.txt"); got != "a\n" {
		t.Errorf("extracted tar stream: %q", got)
	}
	if _, errOut, code := runJail(t, "cp", id+":/nonexistent", dst); code != 125 || !strings.Contains(errOut, "no such file") {
		t.Errorf("cp of a missing file: exit %d, %q", code, errOut)
	}
}

// TestRmLeavesNothing: rm kills every process of the sandbox, removes its sockets, records,
// kept output and name, and leaves the host's mounts as they were. Without -f a running command
// (of an exec or a start) keeps the sandbox.
func TestRmLeavesNothing(t *testing.T) {
	mounts := hostMounts(t)
	id := createSandbox(t, t.TempDir(), "--name", "rm-test")
	ns := sandboxPidNS(t, id)
	mustExec(t, id, "sleep 300 >/dev/null 2>&1 & echo started")
	cmd := exec.Command(jailBin, "exec", id, "--", "sh", "-c", "echo ready; sleep 300")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.ReadFull(stdout, make([]byte, 6))
	if _, errOut, code := runJail(t, "rm", id); code != 125 || !strings.Contains(errOut, "still runs") {
		t.Errorf("rm while an exec runs: exit %d, %q; want it refused", code, errOut)
	}
	if len(processesIn(ns)) < 3 {
		t.Fatalf("the sandbox's processes: %v; want the spawner and two sleeps at least", processesIn(ns))
	}
	tree := keeperTree(t, id)
	if _, errOut, code := runJail(t, "rm", "-f", "rm-test"); code != 0 {
		t.Fatalf("rm -f: exit %d, %s", code, errOut)
	}
	cmd.Wait()
	eventually(t, "the keeper, which answered, exits", func() bool { return zombie(tree[0]) })
	assertGone(t, id, ns, "rm-test", mounts, tree...)
}

// TestIdleTimeoutAndTTLRemoveTheSandbox: the keeper removes a sandbox nothing used for its idle
// timeout, but not while a command of an exec runs; and one whose time to live is over.
func TestIdleTimeoutAndTTLRemoveTheSandbox(t *testing.T) {
	mounts := hostMounts(t)
	idle := createSandbox(t, t.TempDir(), "--idle-timeout", "1s")
	idleNS := sandboxPidNS(t, idle)
	// An exec longer than the idle timeout keeps it.
	mustExec(t, idle, "sleep 2")
	if _, err := os.Stat(sandboxDir(idle)); err != nil {
		t.Fatalf("removed while an exec ran: %v", err)
	}
	idleTree := keeperTree(t, idle)
	ttl := createSandbox(t, t.TempDir(), "--ttl", "2s")
	ttlNS := sandboxPidNS(t, ttl)
	mustExec(t, ttl, "sleep 300 >/dev/null 2>&1 &")
	ttlTree := keeperTree(t, ttl)
	eventually(t, "the idle sandbox removed", func() bool { _, err := os.Stat(sandboxDir(idle)); return err != nil })
	eventually(t, "the sandbox past its TTL removed", func() bool { _, err := os.Stat(sandboxDir(ttl)); return err != nil })
	eventually(t, "their keepers gone", func() bool { return zombie(idleTree[0]) && zombie(ttlTree[0]) })
	assertGone(t, idle, idleNS, "", mounts, idleTree...)
	assertGone(t, ttl, ttlNS, "", mounts, ttlTree...)
}

// TestDeadKeeperTakesTheSandbox: a keeper killed (SIGKILL: nothing of it runs to clean up) takes
// every process of its sandbox along; ls shows the record dead, and prune removes it.
func TestDeadKeeperTakesTheSandbox(t *testing.T) {
	id := createSandbox(t, t.TempDir(), "--name", "dead-keeper")
	ns := sandboxPidNS(t, id)
	mustExec(t, id, "sleep 300 >/dev/null 2>&1 &")
	tree := keeperTree(t, id)
	syscall.Kill(tree[0], syscall.SIGKILL)
	eventually(t, "the sandbox's processes gone with its keeper", func() bool {
		for _, pid := range tree {
			if !zombie(pid) {
				return false
			}
		}
		return len(processesIn(ns)) == 0
	})
	out, _, _ := runJail(t, "inspect", id)
	if !strings.Contains(out, `"state": "dead"`) {
		t.Errorf("inspect after the keeper died: %s", out)
	}
	if _, _, code := runJail(t, "exec", id, "--", "true"); code != 125 {
		t.Errorf("exec in a dead sandbox: exit %d, want 125", code)
	}
	out, errOut, code := runJail(t, "prune")
	if code != 0 || !strings.Contains(out, id) {
		t.Errorf("prune: exit %d, %q, %s; want %s removed", code, out, errOut, id)
	}
	if _, err := os.Lstat(sandboxDir(id)); err == nil {
		t.Error("prune left the dead sandbox's directory")
	}
	// Its name is free again.
	createSandbox(t, t.TempDir(), "--name", "dead-keeper")
}

// TestKilledSpawnerEndsTheSandbox: a command that kills every process it can (kill -9 -1) kills
// the spawner too, which ends the sandbox: the keeper removes its sockets and keeps its record,
// exited, until rm or prune.
func TestKilledSpawnerEndsTheSandbox(t *testing.T) {
	id := createSandbox(t, t.TempDir())
	ns := sandboxPidNS(t, id)
	runJail(t, "exec", id, "--", "sh", "-c", "kill -9 -1")
	eventually(t, "the sandbox ended", func() bool { return len(processesIn(ns)) == 0 })
	eventually(t, "the keeper recorded it", func() bool {
		out, _, _ := runJail(t, "inspect", id)
		return strings.Contains(out, `"state": "exited"`)
	})
	for _, s := range []string{"api.sock", "ctl.sock"} {
		if _, err := os.Lstat(filepath.Join(sandboxDir(id), s)); err == nil {
			t.Errorf("%s stays after the sandbox ended", s)
		}
	}
	if _, errOut, code := runJail(t, "rm", id); code != 0 {
		t.Errorf("rm of an exited sandbox: exit %d, %s", code, errOut)
	}
}

// TestCreateFailsLeavingNothing: a create that fails leaves no sandbox, record, process, name or
// change set behind: a missing grant (init's setup fails; with the overlay workspace too), and
// git commit mode, which a run finishes on the host once its command ends, refused before
// anything starts.
func TestCreateFailsLeavingNothing(t *testing.T) {
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	state := t.TempDir() // the overlay's change-set store
	for _, c := range []struct {
		dir  string
		args []string
		want string
	}{
		{t.TempDir(), []string{"--ro", "/nonexistent/path"}, "/nonexistent/path"},
		{repo, []string{"--workspace", "overlay", "--ro", "/nonexistent/path"}, "/nonexistent/path"},
		{repo, []string{"-p", "agent-commit"}, "git commit mode"},
	} {
		before, _ := os.ReadDir(runtimeDir)
		_, errOut, code := runJailWith(t, runOpts{dir: c.dir, env: []string{"XDG_STATE_HOME=" + state}}, append([]string{"create", "--name", "failing"}, c.args...)...)
		if code != 125 || !strings.Contains(errOut, c.want) {
			t.Fatalf("create %s: exit %d, %q; want 125 and %q", c.args, code, errOut, c.want)
		}
		eventually(t, "nothing of the failed create left", func() bool {
			after, _ := os.ReadDir(runtimeDir)
			_, nameErr := os.Lstat(filepath.Join(runtimeDir, "names", "failing"))
			return len(after) <= len(before)+1 && nameErr != nil // names/ may be new
		})
		for _, comm := range []string{"jail-keeper", "jail-init"} {
			if out, _ := exec.Command("pgrep", "-x", "-P", strconv.Itoa(os.Getpid()), comm).Output(); len(out) > 0 {
				t.Errorf("create %s: %s left: %s", c.args, comm, out)
			}
		}
	}
	if left, _ := os.ReadDir(filepath.Join(state, "jail", "changes")); len(left) > 0 {
		t.Errorf("a failed create left change sets: %v", left)
	}
}

// TestEarlyKeeperKnowsEveryFlag ties spawn_early.c's option table to jail create's flag set, as
// TestEarlyInitKnowsEveryFlag does for a run's: each flag once, as `jail create -v FLAG [VALUE]`;
// the keeper and init must have started before the runtime, in the plan's namespaces.
func TestEarlyKeeperKnowsEveryFlag(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFile(t, filepath.Join(dir, "secret"), "s\n")
	values := map[string]string{
		"p": "agent", "profile": "agent", "ro": "/usr", "rw": dir, "hide": filepath.Join(dir, "secret"),
		"tmpfs": "/workspace", "net": "host", "allow-host": "example.com", "env": "FOO=1", "cwd": dir,
		"timeout": "1m", "name": "flag-test", "label": "a=b", "idle-timeout": "1h", "ttl": "1h",
		"cache": "go", "workspace": "bind",
	}
	fs, _ := newCreateFlagSet()
	fs.VisitAll(func(f *flag.Flag) {
		args, ok := flagArgs(t, f, values, "create", "-v")
		if !ok {
			return
		}
		out, errOut, code := runJailIn(t, dir, "", args...)
		if code == 0 {
			exec.Command(jailBin, "rm", "-f", lastLine(out)).Run()
		}
		if code != 0 || !strings.Contains(errOut, "keeper and init started early, before jail's own runtime") || strings.Contains(errOut, "does not fit") {
			t.Errorf("jail %s: exit %d; want the keeper started before the runtime, in the plan's namespaces "+
				"(does spawn_early.c's option table know --%s for create?):\n%s", strings.Join(args, " "), code, f.Name, errOut)
		}
	})
	// A profile that asks for other namespaces than the guess gets a second init.
	profile := filepath.Join(dir, "hostnet.toml")
	testutil.WriteFile(t, profile, "extends = [\"agent\"]\n[network]\nmode = \"host\"\n")
	out, errOut, code := runJailIn(t, dir, "", "create", "-v", "-p", profile)
	if code != 0 || !strings.Contains(errOut, "does not fit the init the keeper started") {
		t.Errorf("create -p hostnet: exit %d, %s", code, errOut)
	}
	id := lastLine(out)
	defer exec.Command(jailBin, "rm", "-f", id).Run()
	hostNet, _ := os.Readlink("/proc/self/ns/net")
	if got, _, _ := execIn(t, id, "", "readlink", "/proc/self/ns/net"); strings.TrimSpace(got) != hostNet {
		t.Errorf("mode = \"host\" from a profile file: network namespace %q, want the host's %q", got, hostNet)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestCreateRequestIsCreatesFlags: the API's create request becomes jail create's command line
// (client.CreateArgs), field for field: a field the flags lost, or one without a flag, fails.
func TestCreateRequestIsCreatesFlags(t *testing.T) {
	req := api.CreateRequest{
		Name: "n", Profile: "readonly", Workdir: "/w", Cwd: "/c",
		Grants:  api.Grants{Read: []string{"/r"}, Write: []string{"/rw"}, Hide: []string{"/h"}, Tmpfs: []string{"/t"}},
		Network: api.Network{Mode: "proxy", AllowHosts: []string{"a.example", "b.example"}, AllowPrivate: true},
		Env:     map[string]string{"A": "1", "B": "x=y"}, Cache: []string{"go", "npm"}, Timeout: api.Duration(time.Minute),
		Labels: map[string]string{"k": "v"}, IdleTimeout: api.Duration(time.Hour), TTL: api.Duration(2 * time.Hour),
		Workspace: "overlay",
	}
	args, err := client.CreateArgs(req)
	if err != nil || args[0] != "create" {
		t.Fatalf("CreateArgs: %q, %v", args, err)
	}
	fs, f := newCreateFlagSet()
	if err := parseFlags(fs, "create", args[1:]); err != nil || fs.NArg() != 0 {
		t.Fatalf("jail %q: %v", args, err)
	}
	o := f.overlay
	got := []any{f.name, f.profile, o.Process.Cwd, o.Filesystem.Read, o.Filesystem.Write, o.Filesystem.Hide, o.Filesystem.Tmpfs,
		o.Network.Mode, o.Network.Allow, *o.Network.AllowPrivate, o.Process.Env, o.Cache.Tools, o.Limits.Timeout, o.Filesystem.Workspace, []string(f.labels), f.idleTimeout, f.ttl, f.json}
	want := []any{"n", "readonly", "/c", []string{"/r"}, []string{"/rw"}, []string{"/h"}, []string{"/t"},
		"proxy", []string{"a.example", "b.example"}, true, []string{"A=1", "B=x=y"}, []string{"go", "npm"}, "1m0s", "overlay", []string{"k=v"}, "1h0m0s", "2h0m0s", true}
	if g, w := fmt.Sprint(got), fmt.Sprint(want); g != w {
		t.Errorf("jail %q parsed as\n%s\nwant\n%s", args, g, w)
	}
	// Every field of the request is one of the above: a new one must be added to CreateArgs.
	if n := reflect.TypeOf(req).NumField(); n != 13 {
		t.Errorf("CreateRequest has %d fields; this test and CreateArgs know 13", n)
	}
	// And every flag of jail create that describes the sandbox is one of the request's: a new
	// flag of sandboxFlags needs a field (and docs/api.md a row).
	given := map[string]bool{"p": true, "json": true, "v": true, "verbose": true} // -p is --profile; the rest are not the sandbox's
	for _, a := range args[1:] {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		given[name] = true
	}
	fs.VisitAll(func(f *flag.Flag) {
		if !given[f.Name] {
			t.Errorf("jail create --%s has no field in api.CreateRequest", f.Name)
		}
	})
}

// TestBinaryLeavesNetHTTPOut: jail starts twice per run, and net/http's package set-up (with
// crypto/tls's) would cost each start; the API's server speaks HTTP/1.1 itself.
func TestBinaryLeavesNetHTTPOut(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "net/http" || pkg == "crypto/tls" {
			t.Errorf("jail's binary links %s", pkg)
		}
	}
}

// TestExecBothPathsAgree: jail exec's common form runs before Go's runtime (spawn/fast.c); with
// an option only Go takes (--timeout, here the sandbox's own default again) it runs in Go. The
// two must answer alike: output, exit status, jail's messages.
func TestExecBothPathsAgree(t *testing.T) {
	dir := t.TempDir()
	id := createSandbox(t, dir, "--timeout", "300ms", "--name", "both-paths")
	for _, tc := range []struct {
		stdin string
		args  []string
	}{
		{"", []string{"sh", "-c", "echo out; echo err >&2; exit 3"}},
		{"", []string{"sh", "-c", "kill -9 $$"}},
		{"in\n", []string{"sh", "-c", "cat; echo $X"}},
		{"", []string{"sleep", "5"}}, // the default timeout: 124 and its message
		{"", []string{"sh", "-c", "pwd"}},
	} {
		for _, name := range []string{id, "both-paths"} {
			opts := []string{"--env", "X=x", "--cwd", "/tmp"}
			if tc.stdin != "" {
				opts = append(opts, "-i")
			}
			fast := append(append(append([]string{"exec"}, opts...), name, "--"), tc.args...)
			slow := append(append(append([]string{"exec", "--timeout", "300ms"}, opts...), name, "--"), tc.args...)
			o1, e1, c1 := runJailIn(t, dir, tc.stdin, fast...)
			o2, e2, c2 := runJailIn(t, dir, tc.stdin, slow...)
			if o1 != o2 || e1 != e2 || c1 != c2 {
				t.Errorf("%q: before Go's runtime: %q %q %d; in Go: %q %q %d", tc.args, o1, e1, c1, o2, e2, c2)
			}
		}
	}
	_, errOut, code := runJail(t, "exec", id, "--", "sleep", "5")
	if code != 124 || errOut != "jail: timeout: killed the command after 300ms\n" {
		t.Errorf("the sandbox's default timeout: exit %d, %q", code, errOut)
	}
}

// TestRmManyAndDead: rm -f of several sandboxes at once, before Go's runtime (spawn/fast.c), and
// with one whose keeper is dead among them (Go then removes them all).
func TestRmManyAndDead(t *testing.T) {
	dir := t.TempDir()
	a, b := createSandbox(t, dir), createSandbox(t, dir, "--name", "rm-many")
	if _, errOut, code := runJail(t, "rm", "-f", a, "rm-many"); code != 0 {
		t.Fatalf("rm -f of two: exit %d, %s", code, errOut)
	}
	for _, id := range []string{a, b} {
		if _, err := os.Lstat(sandboxDir(id)); err == nil {
			t.Errorf("%s stays after rm -f", id)
		}
	}
	c, d := createSandbox(t, dir), createSandbox(t, dir)
	syscall.Kill(keeperOf(t, d), syscall.SIGKILL)
	eventually(t, "the killed keeper's lock released", func() bool {
		out, _, _ := runJail(t, "inspect", d)
		return strings.Contains(out, `"state": "dead"`)
	})
	if _, errOut, code := runJail(t, "rm", "-f", c, d); code != 0 {
		t.Fatalf("rm -f of a live one and a dead one: exit %d, %s", code, errOut)
	}
	for _, id := range []string{c, d} {
		if _, err := os.Lstat(sandboxDir(id)); err == nil {
			t.Errorf("%s stays after rm -f", id)
		}
	}
	if _, errOut, code := runJail(t, "rm", "-f", "jb_000000000000"); code != 125 || !strings.Contains(errOut, "no such sandbox") {
		t.Errorf("rm -f of no sandbox: exit %d, %q", code, errOut)
	}
}

// TestPersistentSandboxHoldsItsPlaceholders: a persistent sandbox's protected paths that do not
// exist get placeholders for as long as it lives, whatever runs in the directory meanwhile: a
// run there ends without taking them away (the keeper holds them). rm removes them: the tree
// is as it was. The build before made them directories, and left them.
func TestPersistentSandboxHoldsItsPlaceholders(t *testing.T) {
	dir := t.TempDir()
	id := createSandbox(t, dir)
	if _, errOut, code := runJailIn(t, dir, "", "--", "true"); code != 0 {
		t.Fatalf("a run beside it: exit %d, %s", code, errOut)
	}
	if fi, err := os.Lstat(filepath.Join(dir, ".envrc")); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf(".envrc while the sandbox lives: %v, %v; want its placeholder", fi, err)
	}
	if out, _, code := execIn(t, id, "", "sh", "-c", "echo 'curl x|sh' > .envrc"); code == 0 {
		t.Errorf("the sandbox wrote .envrc: %q", out)
	}
	if _, errOut, code := runJail(t, "rm", "-f", id); code != 0 {
		t.Fatalf("rm: exit %d, %s", code, errOut)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left in the directory after rm: %v", entries)
	}
}
