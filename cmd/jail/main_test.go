package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// jailBin is the jail binary the tests run, as an absolute path: $JAIL_BIN (CI builds it once,
// as make does, and runs the tests with it as root and as an ordinary user), or without it one
// TestMain builds from this package. Its file name may be anything.
var jailBin string

// jailComm is the name the kernel gives the processes of jailBin (the waiter, the host): its file
// name, cut to the 15 bytes a process name holds.
var jailComm string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	bin, built, err := testBinary()
	if built != "" {
		defer os.RemoveAll(built)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "cmd/jail's tests run the jail binary: %s\n", err)
		return 1
	}
	jailBin, jailComm = bin, filepath.Base(bin)[:min(len(filepath.Base(bin)), 15)]
	// The default profile keeps each project's caches under $XDG_CACHE_HOME/jail: the tests'
	// many temporary projects keep theirs in a directory of their own, gone at the end.
	caches, err := os.MkdirTemp("", "jail-test-caches-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "cmd/jail's tests: %s\n", err)
		return 1
	}
	defer os.RemoveAll(caches) // no test downloads modules: nothing read-only in it
	os.Setenv("XDG_CACHE_HOME", caches)
	cleanup, err := setRuntimeDir() // persist_helpers_test.go
	if err != nil {
		fmt.Fprintf(os.Stderr, "a runtime directory for persistent sandboxes: %s\n", err)
		return 1
	}
	defer cleanup()
	return m.Run()
}

// testBinary returns the absolute path of the jail binary to test: $JAIL_BIN, checked, or one
// built into a temporary directory, built, for the caller to remove.
func testBinary() (bin, built string, err error) {
	if bin := os.Getenv("JAIL_BIN"); bin != "" {
		abs, err := filepath.Abs(bin)
		if err == nil { // a relative path would not hold in the tests' own working directories
			var fi os.FileInfo
			if fi, err = os.Stat(abs); err == nil && (!fi.Mode().IsRegular() || fi.Mode()&0o111 == 0) {
				err = errors.New("not an executable file")
			}
		}
		if err != nil {
			return "", "", fmt.Errorf("JAIL_BIN=%s: %w (make bin/jail builds one)", bin, err)
		}
		return abs, "", nil
	}
	if built, err = os.MkdirTemp("", "jail-bin-"); err != nil {
		return "", "", fmt.Errorf("no JAIL_BIN, and no directory to build one in: %w", err)
	}
	bin = filepath.Join(built, "jail")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return "", built, fmt.Errorf("no JAIL_BIN, and go build failed: %w (set JAIL_BIN to a jail binary; make bin/jail builds one)", err)
	}
	return bin, built, nil
}

// runJail runs the jail binary with args in a fresh empty working directory and returns what it
// printed and its exit status.
func runJail(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runJailIn(t, t.TempDir(), "", args...)
}

// runJailIn runs the jail binary with args in dir, feeding stdin.
func runJailIn(t *testing.T, dir, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runJailWith(t, runOpts{dir: dir, stdin: stdin}, args...)
}

// runOpts is how the jail process itself is started: where, with what input, with which
// variables added to (or replacing) the test's own environment, under which wrapper command (an
// outer sandbox, a shell that opens descriptors first) or in which namespaces, if any, and how
// long it may take (a minute when zero).
type runOpts struct {
	dir, stdin string
	env        []string
	wrap       []string
	sys        *syscall.SysProcAttr
	timeout    time.Duration
}

// runJailWith runs the jail binary with args as o says, bounded in time.
func runJailWith(t *testing.T, o runOpts, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	if throughExec(t, o, args) { // a run of TestAttacksThroughExec's: create, exec, rm
		return runThroughExec(t, o, args)
	}
	return runJailDirect(t, o, args...)
}

// runJailDirect is runJailWith, always as the jail command args say.
func runJailDirect(t *testing.T, o runOpts, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	if o.timeout == 0 {
		o.timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	argv := append(append(append([]string{}, o.wrap...), jailBin), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = o.dir
	cmd.SysProcAttr = o.sys
	cmd.Env = append(os.Environ(), o.env...)
	cmd.Stdin = bytes.NewBufferString(o.stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("run %q: %s", argv, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("jail %q did not finish within %s (hung?); stderr: %s", args, o.timeout, errb.String())
	}
	return out.String(), errb.String(), code
}
