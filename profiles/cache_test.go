package profiles

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
	"github.com/jail-sandbox/jail/plan"
)

// TestCaches checks that the default profile keeps go, npm, pip and cargo caches in a directory
// of the project's own under $XDG_CACHE_HOME/jail, bound on itself, with each tool pointed there;
// that two projects get two; and that a profile's list replaces the one it extends.
func TestCaches(t *testing.T) {
	host := testHost(t)
	cacheHome := filepath.Join(host.Home, "xdg-cache")
	host.Environ = append(host.Environ, "XDG_CACHE_HOME="+cacheHome)
	load := func(host Host, text string) *plan.Spec {
		t.Helper()
		file := filepath.Join(t.TempDir(), "p.toml")
		testutil.WriteFile(t, file, text)
		p, err := Load(file, host)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := Resolve(p, host, []string{"true"})
		if err != nil {
			t.Fatal(err)
		}
		return spec
	}
	spec := load(host, "extends = [\"agent\"]\n")
	c := spec.Caches
	if c == nil || filepath.Dir(c.Dir) != filepath.Join(cacheHome, "jail") ||
		!strings.HasPrefix(filepath.Base(c.Dir), filepath.Base(host.Cwd)+"-") ||
		!slices.Equal(c.Tools, []string{"go", "npm", "pip", "cargo"}) {
		t.Fatalf("caches %+v, want go, npm, pip, cargo in %s/jail/%s-HASH", c, cacheHome, filepath.Base(host.Cwd))
	}
	if m := find(spec, c.Dir); len(m) != 1 || m[0].Kind != plan.MountBind || m[0].Source != c.Dir {
		t.Errorf("mounts at %s: %+v, want the directory bound on itself", c.Dir, m)
	}
	for _, v := range []string{"GOCACHE=" + c.Dir + "/go/build", "GOMODCACHE=" + c.Dir + "/go/mod",
		"npm_config_cache=" + c.Dir + "/npm", "PIP_CACHE_DIR=" + c.Dir + "/pip", "CARGO_HOME=" + c.Dir + "/cargo"} {
		if !slices.Contains(spec.Env, v) {
			t.Errorf("env lacks %s: %q", v, spec.Env)
		}
	}

	other := host
	other.Cwd = t.TempDir()
	if d := load(other, "extends = [\"agent\"]\n").Caches.Dir; d == c.Dir {
		t.Errorf("two projects share the caches %s", d)
	}
	if c := load(host, "extends = [\"agent\"]\n[cache]\ntools = [\"npm\"]\n").Caches; c == nil || !slices.Equal(c.Tools, []string{"npm"}) {
		t.Errorf("a profile's tools replace the extended ones: %+v", c)
	}
	spec = load(host, "extends = [\"agent\"]\n[cache]\ntools = []\n")
	if spec.Caches != nil || slices.ContainsFunc(spec.Env, func(v string) bool { return strings.HasPrefix(v, "GOCACHE=") }) {
		t.Errorf("tools = [] keeps caches: %+v %q", spec.Caches, spec.Env)
	}
	_, err := resolve(t, host, "[cache]\ntools = [\"go\", \"nmp\"]\n")
	wantError(t, err, "test.toml", 2, "cache.tools", `unknown tool "nmp" (did you mean npm?`)
}
