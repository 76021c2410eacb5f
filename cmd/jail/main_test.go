package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// jailBin is the jail binary under test: $JAIL_BIN when set (CI builds it once and runs the tests
// as an ordinary user too), otherwise built from this package in TestMain.
var jailBin string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	jailBin = os.Getenv("JAIL_BIN")
	if jailBin == "" {
		dir, err := os.MkdirTemp("", "jail-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		jailBin = filepath.Join(dir, "jail")
		build := exec.Command("go", "build", "-o", jailBin, ".")
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "build jail: %s\n", err)
			return 1
		}
	}
	return m.Run()
}

// mustWork is set in CI (JAIL_MUST_WORK=1): there no test may skip for a missing kernel feature.
func mustWork() bool { return os.Getenv("JAIL_MUST_WORK") == "1" }

// requireFeature skips the test when the kernel lacks what it needs, except where the
// feature must work, where a missing feature fails the test instead.
func requireFeature(t *testing.T, have bool, what string) {
	t.Helper()
	if have {
		return
	}
	if mustWork() {
		t.Fatalf("%s is missing, and JAIL_MUST_WORK=1", what)
	}
	t.Skipf("%s is missing on this kernel", what)
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
// variables added to (or replacing) the test's own environment, and under which wrapper
// command (an outer sandbox, a shell that opens descriptors first), if any.
type runOpts struct {
	dir, stdin string
	env        []string
	wrap       []string
}

// runJailWith runs the jail binary with args as o says, bounded to a minute.
func runJailWith(t *testing.T, o runOpts, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	argv := append(append(append([]string{}, o.wrap...), jailBin), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = o.dir
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
		t.Fatalf("jail %q did not finish within a minute; stderr: %s", args, errb.String())
	}
	return out.String(), errb.String(), code
}
