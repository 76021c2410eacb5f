package profiles

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/plan"
)

// overlayHost is a test host whose change sets live in a state directory of their own.
func overlayHost(t *testing.T) (Host, string) {
	t.Helper()
	host := withState(testHost(t), t.TempDir())
	host.ChangeSet = "0123abcd"
	return host, filepath.Join(host.getenv("XDG_STATE_HOME"), "jail", "changes", host.ChangeSet)
}

// withState is host with XDG_STATE_HOME set to state.
func withState(host Host, state string) Host {
	host.Environ = append(slices.DeleteFunc(slices.Clone(host.Environ), func(kv string) bool {
		return strings.HasPrefix(kv, "XDG_STATE_HOME=")
	}), "XDG_STATE_HOME="+state)
	return host
}

// TestOverlayWorkspace: the working directory's write grant becomes the overlay, with a fresh
// change set's layers; the self-bind above a protected path becomes a pin of the overlay's
// directory; protections stay; Landlock grants writing the overlay.
func TestOverlayWorkspace(t *testing.T) {
	host, dir := overlayHost(t)
	cwd := host.Cwd
	mkdir(t, cwd+"/.git/hooks")
	spec := mustResolve(t, host, `[filesystem]
write = ["$CWD"]
protect = ["$CWD/.git/hooks/", "$CWD/.envrc"]
workspace = "overlay"
[cache]
tools = ["go"]
`)
	if spec.Caches == nil || !slices.ContainsFunc(spec.Mounts, func(m plan.Mount) bool { return m.Kind == plan.MountBind && m.Target == spec.Caches.Dir }) {
		t.Errorf("the project's cache is not bound beside the overlay: %+v", spec.Mounts)
	}
	for _, want := range []plan.Mount{
		{Kind: plan.MountOverlay, Source: cwd, Target: cwd, IsDir: true, Upper: dir + "/upper", Work: dir + "/work"},
		{Kind: plan.MountPin, Target: cwd + "/.git", IsDir: true},
		{Kind: plan.MountProtect, Source: cwd + "/.git/hooks", Target: cwd + "/.git/hooks", IsDir: true},
		{Kind: plan.MountProtect, Source: cwd + "/.envrc", Target: cwd + "/.envrc", Create: true},
	} {
		if !slices.Contains(spec.Mounts, want) {
			t.Errorf("missing %+v in %+v", want, spec.Mounts)
		}
	}
	if slices.ContainsFunc(spec.Mounts, func(m plan.Mount) bool { return m.Kind == plan.MountBind && within(m.Target, cwd) }) {
		t.Errorf("a bind is left in the workspace: %+v", spec.Mounts)
	}
	if !slices.Contains(spec.Landlock.Write, cwd) {
		t.Errorf("Landlock write %v lacks the workspace %s", spec.Landlock.Write, cwd)
	}
	if spec.Cwd != cwd {
		t.Errorf("cwd %q, want %q", spec.Cwd, cwd)
	}
}

func TestOverlayWorkspaceErrors(t *testing.T) {
	host, _ := overlayHost(t)
	_, err := resolve(t, host, "[filesystem]\nread = [\"$CWD\"]\nworkspace = \"overlay\"\n")
	wantError(t, err, "test.toml", 3, "filesystem.workspace", "not a writable grant of its own")

	mkdir(t, host.Cwd+"/out")
	_, err = resolve(t, host, "[filesystem]\nwrite = [\"$CWD\", \"$CWD/out\"]\nworkspace = \"overlay\"\n")
	wantError(t, err, "test.toml", 2, "filesystem.write", "would write the real tree")

	_, err = resolve(t, withState(host, host.Cwd+"/.state"), "[filesystem]\nwrite = [\"$CWD\"]\nworkspace = \"overlay\"\n")
	wantError(t, err, "test.toml", 3, "filesystem.workspace", "lies inside the workspace")

	bad := host
	bad.ChangeSet = "../x"
	_, err = resolve(t, bad, "[filesystem]\nwrite = [\"$CWD\"]\nworkspace = \"overlay\"\n")
	wantError(t, err, "test.toml", 3, "filesystem.workspace", "cannot name a change set")
}

// TestStoreHidden: the change-set store is masked wherever a grant would show it, in an
// overlay run even before it exists (the run creates it before the sandbox starts).
func TestStoreHidden(t *testing.T) {
	host, dir := overlayHost(t)
	store := filepath.Dir(dir)
	state := filepath.Dir(filepath.Dir(store))
	hidden := plan.Mount{Kind: plan.MountHideDir, Target: store, IsDir: true}
	spec := mustResolve(t, host, "[filesystem]\nwrite = [\"$CWD\"]\nread = [\""+state+"\"]\nworkspace = \"overlay\"\n")
	if !slices.Contains(spec.Mounts, hidden) {
		t.Errorf("overlay run: the store is not hidden: %+v", spec.Mounts)
	}
	spec = mustResolve(t, host, "[filesystem]\nwrite = [\"$CWD\"]\nread = [\""+state+"\"]\n")
	if slices.Contains(spec.Mounts, hidden) {
		t.Errorf("bind run: a missing store is hidden: %+v", spec.Mounts)
	}
	mkdir(t, store)
	spec = mustResolve(t, host, "[filesystem]\nwrite = [\"$CWD\"]\nread = [\""+state+"\"]\n")
	if !slices.Contains(spec.Mounts, hidden) {
		t.Errorf("bind run: the store is not hidden: %+v", spec.Mounts)
	}
}
