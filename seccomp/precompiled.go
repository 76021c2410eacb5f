package seccomp

import (
	"bytes"
	"embed"
	"encoding/hex"
	"hash/fnv"
	"runtime"
	"strconv"
)

// Compiling a filter with libseccomp costs the launcher 0.7 ms or more of CPU on every run,
// the same work each time for the built-in profiles' policy. The programs libseccomp produced
// for those policies are therefore embedded: `go generate` compiles them with libseccomp, and
// TestPrecompiled fails when an embedded program differs from what libseccomp produces now, or
// when one is missing or left over.
//
// A program is filed under the digest of the plan it was compiled from (every rule, action and
// argument check), next to that plan written out (<digest>.plan), and a policy uses it only when
// its own plan writes the same bytes: editing the rules without regenerating makes Compile fall
// back to libseccomp (and the test fail), never use a stale program.
//
// The digest is a 128-bit FNV-1a, which keeps crypto/* and its init functions out of the
// binary (it starts twice a run). FNV is not collision resistant, so the digest only finds the
// candidate and the plan text decides: a profile crafted to collide gets its own rules compiled.
//
//go:generate go test -run ^TestPrecompiled$ . -update
//go:embed precompiled
var precompiled embed.FS

// precompiledBase is where the program compiled from the plan written as text is embedded, for
// this architecture: base+".bpf" is the program, base+".plan" the text.
func precompiledBase(text []byte) string {
	return "precompiled/" + runtime.GOARCH + "/" + digest(text)
}

// lookupPrecompiled returns the embedded program compiled from pl, or nil when there is none.
func lookupPrecompiled(pl *plan) []byte {
	text := pl.text()
	return lookupPrecompiledAt(precompiledBase(text), text)
}

// lookupPrecompiledAt returns the program embedded under base only if it was compiled from a
// plan written exactly as text, since a digest can collide.
func lookupPrecompiledAt(base string, text []byte) []byte {
	compiledFrom, err := precompiled.ReadFile(base + ".plan")
	if err != nil || !bytes.Equal(compiledFrom, text) {
		return nil
	}
	bpf, err := precompiled.ReadFile(base + ".bpf")
	if err != nil {
		return nil
	}
	return bpf
}

// digest names the plan written as text.
func digest(text []byte) string {
	h := fnv.New128a()
	h.Write(text)
	var sum [16]byte
	return hex.EncodeToString(h.Sum(sum[:0]))
}

// text writes the plan out: everything build and Compile turn into instructions, unambiguously
// (each name after its length, numbers in fixed places), so that equal texts mean equal programs.
func (pl *plan) text() []byte {
	b := make([]byte, 0, 8192)
	b = append(b, "mode "...)
	b = appendName(b, pl.mode)
	b = append(b, "\nerrno "...)
	b = strconv.AppendInt(b, int64(pl.errno), 10)
	b = append(b, "\nlog "...)
	b = strconv.AppendBool(b, pl.log)
	b = append(b, "\ndenied"...)
	for _, name := range pl.denied {
		b = append(b, ' ')
		b = appendName(b, name)
	}
	b = append(b, "\nenosys"...)
	for _, name := range pl.enosys {
		b = append(b, ' ')
		b = appendName(b, name)
	}
	b = append(b, '\n')
	for _, c := range pl.checks {
		b = append(b, "check "...)
		b = appendName(b, c.name)
		b = append(b, " always="...)
		b = strconv.AppendBool(b, c.always)
		b = append(b, '\n')
		for _, match := range c.matches {
			for _, cond := range match {
				b = append(b, " arg"...)
				b = strconv.AppendUint(b, uint64(cond.arg), 10)
				b = append(b, " op"...)
				b = strconv.AppendInt(b, int64(cond.op), 10)
				b = append(b, " 0x"...)
				b = strconv.AppendUint(b, cond.a, 16)
				b = append(b, " 0x"...)
				b = strconv.AppendUint(b, cond.b, 16)
			}
			b = append(b, '\n')
		}
	}
	return b
}

// appendName appends name to b after its length, so that no two lists of names write the same.
func appendName(b []byte, name string) []byte {
	b = strconv.AppendInt(b, int64(len(name)), 10)
	b = append(b, ':')
	return append(b, name...)
}
