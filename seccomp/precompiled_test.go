package seccomp

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"testing"
)

var update = flag.Bool("update", false, "recompile the embedded programs with libseccomp (go generate)")

// precompiledPolicies are the policies whose programs are embedded: the built-in profiles'
// (all keep the default [syscalls]) and that default with MPTCP blocked (a profile on the
// host's network with TCP port rules).
var precompiledPolicies = []struct {
	name   string
	policy Policy
}{
	{"default", Policy{}},
	{"default, MPTCP blocked", Policy{BlockMPTCP: true}},
}

// TestPrecompiled proves every embedded program identical to what libseccomp compiles from its
// plan now, and its plan text identical to the plan's; and that no file is missing or left over.
// With -update it writes them instead.
func TestPrecompiled(t *testing.T) {
	want := map[string][]byte{}
	for _, c := range precompiledPolicies {
		pl, err := newPlan(c.policy)
		if err != nil {
			t.Fatal(err)
		}
		bpf, err := compilePlan(pl)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		text := pl.text()
		base := precompiledBase(text)
		want[base+".bpf"] = bpf
		want[base+".plan"] = text
		if *update {
			continue
		}
		for _, file := range []string{base + ".bpf", base + ".plan"} {
			if got, err := precompiled.ReadFile(file); err != nil || !bytes.Equal(got, want[file]) {
				t.Errorf("%s: embedded %s is missing or stale: run go generate ./seccomp", c.name, file)
			}
		}
		if got := lookupPrecompiled(pl); !bytes.Equal(got, bpf) {
			t.Errorf("%s: the embedded program (%d bytes) is not what libseccomp compiles now (%d bytes): run go generate ./seccomp",
				c.name, len(got), len(bpf))
		}
		if f, err := Compile(c.policy); err != nil || !bytes.Equal(f.BPF(), bpf) {
			t.Errorf("%s: Compile does not return the embedded program (err %v)", c.name, err)
		}
	}
	dir := path.Join("precompiled", runtime.GOARCH)
	if *update {
		writePrecompiled(t, dir, want)
		return
	}
	entries, err := fs.ReadDir(precompiled, dir)
	if err != nil {
		t.Fatalf("no programs embedded for %s: run go generate ./seccomp", runtime.GOARCH)
	}
	for _, e := range entries {
		if _, ok := want[path.Join(dir, e.Name())]; !ok {
			t.Errorf("%s/%s belongs to no policy in precompiledPolicies: run go generate ./seccomp", dir, e.Name())
		}
	}
}

// writePrecompiled replaces the embedded programs and plan texts of this architecture with want.
func writePrecompiled(t *testing.T, dir string, want map[string][]byte) {
	if err := os.RemoveAll(filepath.FromSlash(dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.FromSlash(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	for file, data := range want {
		if err := os.WriteFile(filepath.FromSlash(file), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// defaultPlan is the default policy's plan.
func defaultPlan(t *testing.T) *plan {
	t.Helper()
	pl, err := newPlan(Policy{})
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// planChanges each change one rule of the default policy's plan.
var planChanges = map[string]func(*plan){
	"one denial fewer": func(pl *plan) { pl.denied = pl.denied[1:] },
	"another errno":    func(pl *plan) { pl.errno++ },
	"log":              func(pl *plan) { pl.log = true },
	"no ENOSYS":        func(pl *plan) { pl.enosys = nil },
	"a check's value":  func(pl *plan) { pl.checks[0].matches[0][0].b++ },
	"a check's arg":    func(pl *plan) { pl.checks[len(pl.checks)-1].matches[0][0].arg++ },
	"one check fewer":  func(pl *plan) { pl.checks = pl.checks[1:] },
}

// An embedded program is used only for exactly the plan it was compiled from: any change to a
// rule misses it, and Compile goes to libseccomp.
func TestPrecompiledOnlyForItsPlan(t *testing.T) {
	if lookupPrecompiled(defaultPlan(t)) == nil {
		t.Skipf("no program embedded for the default policy on %s", runtime.GOARCH)
	}
	for name, change := range planChanges {
		pl := defaultPlan(t)
		change(pl)
		if lookupPrecompiled(pl) != nil {
			t.Errorf("%s: still finds the embedded program", name)
		}
	}
	for _, p := range []Policy{{Deny: []string{"uname"}}, {Allow: []string{"ptrace"}}, {Errno: "EACCES"}, {Log: true}} {
		pl, err := newPlan(p)
		if err != nil {
			t.Fatal(err)
		}
		if lookupPrecompiled(pl) != nil {
			t.Errorf("%+v: an embedded program for a policy that is not built in", p)
		}
	}
}

// A plan whose digest collides with a built-in plan's (forced here by looking it up under the
// built-in plan's name) still does not get that plan's program: the embedded plan text decides.
func TestPrecompiledNotForACollidingPlan(t *testing.T) {
	text := defaultPlan(t).text()
	base := precompiledBase(text)
	if lookupPrecompiledAt(base, text) == nil {
		t.Skipf("no program embedded for the default policy on %s", runtime.GOARCH)
	}
	texts := map[string][]byte{
		"empty":              nil,
		"one byte fewer":     text[:len(text)-1],
		"one byte more":      append(bytes.Clone(text), '\n'),
		"one byte different": append(bytes.Clone(text[:len(text)-1]), ' '),
	}
	for name, change := range planChanges {
		pl := defaultPlan(t)
		change(pl)
		texts[name] = pl.text()
	}
	for name, colliding := range texts {
		if bytes.Equal(colliding, text) {
			t.Fatalf("%s: the plan text did not change", name)
		}
		if lookupPrecompiledAt(base, colliding) != nil {
			t.Errorf("%s: a plan with the built-in digest but another text gets the embedded program", name)
		}
	}
}
