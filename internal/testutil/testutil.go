// Package testutil is what the tests of several packages share: the JAIL_MUST_WORK rule, and
// making a file for a test. A test
// that needs a kernel or host feature this machine may lack (a user namespace, a Landlock ABI, a
// tool) asks Require: without the feature it skips, naming it; with JAIL_MUST_WORK=1, as CI sets
// it on a kernel that has every feature jail uses, it fails instead, so that a feature that
// stopped working cannot hide behind a skip. After cilium/ebpf's internal/testutils.
package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// MustWork reports whether every feature jail uses must work here (JAIL_MUST_WORK=1).
func MustWork() bool {
	return os.Getenv("JAIL_MUST_WORK") == "1"
}

// Require returns when have is true. Otherwise the feature the format and args name is missing:
// Require skips tb, or fails it where every feature must work.
func Require(tb testing.TB, have bool, format string, args ...any) {
	tb.Helper()
	if have {
		return
	}
	what := fmt.Sprintf(format, args...)
	if MustWork() {
		tb.Fatalf("%s is missing, and JAIL_MUST_WORK=1: every feature jail uses must work here", what)
	}
	tb.Skipf("%s is missing here (JAIL_MUST_WORK=1 would fail this test)", what)
}

// WriteFile makes path, and the directories above it, holding text; it fails tb if it cannot.
func WriteFile(tb testing.TB, path, text string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
}
