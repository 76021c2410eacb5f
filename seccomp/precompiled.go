package seccomp

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"runtime"
)

// Compiling a filter with libseccomp costs the launcher 0.7 ms or more of CPU on every run,
// the same work each time for the built-in profiles' policy. The programs libseccomp produced
// for those policies are therefore embedded: `go generate` compiles them with libseccomp, and
// TestPrecompiled fails when an embedded program differs from what libseccomp produces now, or
// when one is missing or left over.
//
// A program is filed under the digest of the plan it was compiled from (every rule, action and
// argument check), so a policy uses an embedded program only when its plan is exactly the one
// that was compiled: editing the rules without regenerating makes Compile fall back to
// libseccomp (and the test fail), never use a stale program.
//
//go:generate go test -run ^TestPrecompiled$ . -update
//go:embed precompiled
var precompiled embed.FS

// precompiledFile is where the program compiled from pl is embedded, for this architecture.
func precompiledFile(pl *plan) string {
	return fmt.Sprintf("precompiled/%s/%s.bpf", runtime.GOARCH, pl.digest())
}

// lookupPrecompiled returns the embedded program compiled from pl, or nil when there is none.
func lookupPrecompiled(pl *plan) []byte {
	bpf, err := precompiled.ReadFile(precompiledFile(pl))
	if err != nil {
		return nil
	}
	return bpf
}

// digest identifies the plan: everything build and Compile turn into instructions.
func (pl *plan) digest() string {
	h := sha256.New()
	fmt.Fprintf(h, "mode %s\nerrno %d\nlog %t\n", pl.mode, pl.errno, pl.log)
	fmt.Fprintf(h, "denied %q\nenosys %q\n", pl.denied, pl.enosys)
	for _, c := range pl.checks {
		fmt.Fprintf(h, "check %s always=%t\n", c.name, c.always)
		for _, match := range c.matches {
			for _, cond := range match {
				fmt.Fprintf(h, " arg%d op%d %#x %#x", cond.arg, int(cond.op), cond.a, cond.b)
			}
			fmt.Fprintln(h)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
