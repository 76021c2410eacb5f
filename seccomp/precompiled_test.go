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
// plan now, and that none is missing or left over. With -update it writes them instead.
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
		want[precompiledFile(pl)] = bpf
		if *update {
			continue
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
			t.Errorf("%s/%s is compiled from no policy in precompiledPolicies: run go generate ./seccomp", dir, e.Name())
		}
	}
}

// writePrecompiled replaces the embedded programs of this architecture with want.
func writePrecompiled(t *testing.T, dir string, want map[string][]byte) {
	if err := os.RemoveAll(filepath.FromSlash(dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.FromSlash(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	for file, bpf := range want {
		if err := os.WriteFile(filepath.FromSlash(file), bpf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// An embedded program is used only for exactly the plan it was compiled from: any change to a
// rule misses it, and Compile goes to libseccomp.
func TestPrecompiledOnlyForItsPlan(t *testing.T) {
	fresh := func() *plan {
		pl, err := newPlan(Policy{})
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	if lookupPrecompiled(fresh()) == nil {
		t.Skipf("no program embedded for the default policy on %s", runtime.GOARCH)
	}
	changes := map[string]func(*plan){
		"one denial fewer": func(pl *plan) { pl.denied = pl.denied[1:] },
		"another errno":    func(pl *plan) { pl.errno++ },
		"log":              func(pl *plan) { pl.log = true },
		"no ENOSYS":        func(pl *plan) { pl.enosys = nil },
		"a check's value":  func(pl *plan) { pl.checks[0].matches[0][0].b++ },
		"a check's arg":    func(pl *plan) { pl.checks[len(pl.checks)-1].matches[0][0].arg++ },
		"one check fewer":  func(pl *plan) { pl.checks = pl.checks[1:] },
	}
	for name, change := range changes {
		pl := fresh()
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
