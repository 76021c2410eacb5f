package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCachesPersistPerProject checks, under the default profile, that go and npm are pointed at
// the project's own cache directory (each tool says so itself), that what a run leaves there is
// there for the next run of the same project and not for another project's, and that the host's
// own Go and npm caches get nothing. (A real build's second run is timed by bench/cache.sh.)
func TestCachesPersistPerProject(t *testing.T) {
	cacheHome := t.TempDir()
	var tools []string // what is installed here
	for _, tool := range []string{"go", "npm"} {
		if _, err := exec.LookPath(tool); err == nil {
			tools = append(tools, tool)
		}
	}
	// The run lists the probes earlier runs left in every cache directory it can see, then
	// leaves one where each tool says its cache is.
	script := `set -e
find "${GOCACHE%/*/*}/.." -name jail-test-probe # every cache directory under jail's
for dir in $(go env GOCACHE 2>/dev/null) $(npm config get cache 2>/dev/null); do
	mkdir -p "$dir" && touch "$dir/jail-test-probe" && echo "cache $dir"
done`
	run := func(proj string) (caches, probes []string) {
		t.Helper()
		stdout, stderr, code := runJailWith(t, runOpts{dir: proj, env: []string{"XDG_CACHE_HOME=" + cacheHome}}, "--", "sh", "-c", script)
		if code != 0 {
			t.Fatalf("in %s: exit %d\n%s%s", proj, code, stdout, stderr)
		}
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			if dir, ok := strings.CutPrefix(line, "cache "); ok {
				caches = append(caches, dir)
			} else {
				probes = append(probes, line)
			}
		}
		return caches, probes
	}
	first, second := t.TempDir(), t.TempDir()
	caches, probes := run(first)
	if len(caches) != len(tools) || len(probes) > 0 {
		t.Fatalf("the tools (%q) named the caches %q; probes before any run: %q", tools, caches, probes)
	}
	for _, dir := range caches {
		if !strings.HasPrefix(dir, filepath.Join(cacheHome, "jail", filepath.Base(first)+"-")) {
			t.Errorf("a tool's cache %s is not in the project's directory under %s/jail", dir, cacheHome)
		}
	}
	if _, probes := run(first); len(probes) != len(tools) {
		t.Errorf("the project's second run sees the probes %q, want the %d of the first", probes, len(tools))
	}
	if caches2, probes := run(second); len(probes) > 0 || len(caches2) > 0 && caches2[0] == caches[0] {
		t.Errorf("the other project's first run sees the probes %q, or the same caches %q", probes, caches2)
	}
	for _, dir := range hostCaches(t) {
		if _, err := os.Stat(filepath.Join(dir, "jail-test-probe")); err == nil {
			t.Errorf("the host's own cache %s got the sandbox's probe", dir)
		}
	}
}

// hostCaches are the host's own go and npm caches.
func hostCaches(t *testing.T) []string {
	var dirs []string
	if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	if out, err := exec.Command("npm", "config", "get", "cache").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	return dirs
}
