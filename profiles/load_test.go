package profiles

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// TestMergeOrder: extends apply first, in order; later scalars win; lists append without
// duplicates; the file itself comes last.
func TestMergeOrder(t *testing.T) {
	host := testHost(t)
	dir := t.TempDir()
	testutil.WriteFile(t, dir+"/one.toml", "description = \"one\"\n[process]\nhostname = \"one\"\nenv = [\"A\", \"B\"]\n[limits]\ncpu = 1\n")
	testutil.WriteFile(t, dir+"/two.toml", "[process]\nhostname = \"two\"\nenv = [\"B\", \"C\"]\n[syscalls]\nlog = true\n")
	testutil.WriteFile(t, dir+"/top.toml", "extends = [\"one.toml\", \"two.toml\"]\n[process]\nenv = [\"D\", \"A\"]\n[limits]\ncpu = 3\n")
	p, err := Load(dir+"/top.toml", host)
	if err != nil {
		t.Fatal(err)
	}
	if p.Description != "one" || p.Process.Hostname != "two" || *p.Limits.CPU != 3 || !*p.Syscalls.Log || len(p.Extends) != 0 {
		t.Errorf("merged %+v", p)
	}
	if !slices.Equal(p.Process.Env, []string{"A", "B", "C", "D"}) {
		t.Errorf("env %q", p.Process.Env)
	}
	if p.Source != dir+"/top.toml" {
		t.Errorf("source %q", p.Source)
	}
	if o := p.origin("process.hostname", ""); filepath.Base(o.File) != "two.toml" || o.Line != 2 {
		t.Errorf("hostname origin %+v", o)
	}
}

func TestMergeOverlay(t *testing.T) {
	base := parse(t, "[filesystem]\nread = [\"/usr\"]\n")
	overlay := &Profile{Source: "command line", Filesystem: Filesystem{Read: []string{"/nonexistent/flag"}}}
	merged := Merge(base, overlay)
	if merged.Source != "test.toml" || !slices.Equal(merged.Filesystem.Read, []string{"/usr", "/nonexistent/flag"}) {
		t.Errorf("%+v", merged)
	}
	if len(base.Filesystem.Read) != 1 {
		t.Error("Merge modified its input")
	}
	_, err := Resolve(merged, testHost(t), nil)
	if err == nil || !strings.HasPrefix(err.Error(), "command line: filesystem.read: missing required path") {
		t.Errorf("got %v", err)
	}
}

// TestLookupOrder: $XDG_CONFIG_HOME/jail, then the built-ins; never the working directory's
// ./.jail, which earlier sandboxed commands may have written.
func TestLookupOrder(t *testing.T) {
	host := testHost(t)
	config := filepath.Join(host.Home, ".config", "jail")
	testutil.WriteFile(t, config+"/agent.toml", "description = \"user agent\"\n")
	testutil.WriteFile(t, config+"/mine.toml", "description = \"user mine\"\n")
	testutil.WriteFile(t, host.Cwd+"/.jail/agent.toml", "description = \"planted\"\n")
	for ref, want := range map[string]string{"agent": "user agent", "mine": "user mine", "minimal": "only the dynamic loader"} {
		p, err := Load(ref, host)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(p.Description, want) {
			t.Errorf("%s: description %q, want %q", ref, p.Description, want)
		}
	}
	entries := List(host)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name+"="+e.Description)
	}
	want := []string{"agent=user agent", "mine=user mine"}
	if !slices.Contains(names, want[0]) || !slices.Contains(names, want[1]) || len(entries) != len(builtinNames())+1 { // the user's agent shadows the built-in one
		t.Errorf("List: %q", names)
	}
	if _, err := Load("nope", host); err == nil || !strings.Contains(err.Error(), `profile "nope" not found`) {
		t.Errorf("got %v", err)
	}
}

// TestProfileFileBound: Load reads only regular files up to MaxProfileSize, whether named by
// path, by extends or found by name; List skips what Load would refuse.
func TestProfileFileBound(t *testing.T) {
	host := testHost(t)
	dir := t.TempDir()
	testutil.WriteFile(t, dir+"/exact.toml", "#"+strings.Repeat("x", MaxProfileSize-2)+"\n")
	testutil.WriteFile(t, dir+"/over.toml", "#"+strings.Repeat("x", MaxProfileSize-1)+"\n")
	testutil.WriteFile(t, dir+"/extends.toml", "extends = [\"/dev/zero\"]\n")
	config := filepath.Join(host.Home, ".config", "jail")
	mkdir(t, config+"/dir.toml")
	if _, err := Load(dir+"/exact.toml", host); err != nil {
		t.Errorf("a profile of exactly MaxProfileSize bytes: %v", err)
	}
	for ref, want := range map[string]string{
		dir + "/over.toml":    "too large for a profile",
		"/dev/zero":           "a character device, not a regular file",
		dir + "/extends.toml": "extends: profile /dev/zero: a character device",
		"dir":                 "profile dir: a directory, not a regular file",
	} {
		if _, err := Load(ref, host); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%s) = %v, want an error saying %q", ref, err, want)
		}
	}
	for _, e := range List(host) {
		if e.Name == "dir" {
			t.Errorf("List shows a directory as a profile: %+v", e)
		}
	}
}

// TestExtendsStaysBeside: a relative extends cannot climb out of its file's directory — from
// .jail/, that would be the project directory, which a sandbox writes.
func TestExtendsStaysBeside(t *testing.T) {
	host := testHost(t)
	testutil.WriteFile(t, host.Cwd+"/base.toml", "description = \"planted\"\n")
	testutil.WriteFile(t, host.Cwd+"/.jail/sub/inner.toml", "description = \"inner\"\n")
	testutil.WriteFile(t, host.Cwd+"/.jail/dev.toml", "extends = [\"../base.toml\"]\n")
	testutil.WriteFile(t, host.Cwd+"/.jail/ok.toml", "extends = [\"sub/inner.toml\", \""+host.Cwd+"/.jail/sub/inner.toml\", \"agent\"]\n")
	_, err := Load(host.Cwd+"/.jail/dev.toml", host)
	wantError(t, err, "dev.toml", 1, "extends", "climbs out of the directory")
	if p, err := Load(host.Cwd+"/.jail/ok.toml", host); err != nil || p.Description != "inner" && !strings.HasPrefix(p.Description, "the working") {
		t.Errorf("extends beside and absolute: %v, %+v", err, p)
	}
}
