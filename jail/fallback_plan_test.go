package jail

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/plan"
)

// tree makes files (and their directories) under a temporary root and returns it.
func tree(t *testing.T, files ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, f := range files {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestCarveGrantsSiblingsOfHiddenPaths(t *testing.T) {
	root := tree(t, "a", "b/x", "b/secret/key", "c/d/token", "c/d/ok", "c/e")
	if err := os.Symlink("b/secret", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	j := func(p string) string { return filepath.Join(root, p) }
	spec := &plan.Spec{
		Landlock: plan.Landlock{Mode: "best-effort", Read: []string{root}},
		Mounts: []plan.Mount{
			{Kind: plan.MountROBind, Source: root, Target: root},
			{Kind: plan.MountHideDir, Target: j("b/secret")},
			{Kind: plan.MountHideFile, Target: j("c/d/token")},
		},
	}
	p, err := planFallback(spec, 7)
	if err != nil {
		t.Fatal(err)
	}
	wantRead := []string{j("a"), j("b/x"), j("c/d/ok"), j("c/e")}
	if !slices.Equal(p.Landlock.Read, wantRead) {
		t.Errorf("read grants\n got %q\nwant %q", p.Landlock.Read, wantRead)
	}
	wantList := []string{root, j("b"), j("c"), j("c/d")}
	if !slices.Equal(p.Landlock.List, wantList) {
		t.Errorf("list grants\n got %q\nwant %q", p.Landlock.List, wantList)
	}
	carried := strings.Join(p.Carried, "\n")
	for _, want := range []string{"hide " + j("b/secret"), "hide " + j("c/d/token")} {
		if !strings.Contains(carried, want) {
			t.Errorf("carried does not name %q:\n%s", want, carried)
		}
	}
}

func TestCarveWriteGrantNotesBlockedCreation(t *testing.T) {
	root := tree(t, "src/main.go", ".env")
	spec := &plan.Spec{
		Landlock: plan.Landlock{Mode: "best-effort", Write: []string{root}},
		Mounts:   []plan.Mount{{Kind: plan.MountHideFile, Target: filepath.Join(root, ".env")}},
	}
	p, err := planFallback(spec, 7)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(root, "src")}; !slices.Equal(p.Landlock.Write, want) {
		t.Errorf("write grants %q, want %q", p.Landlock.Write, want)
	}
	if !strings.Contains(strings.Join(p.Carried, "\n"), "cannot be created or removed directly in "+root) {
		t.Errorf("no note that %s only lists now: %q", root, p.Carried)
	}
}

func TestPlanFallbackLosses(t *testing.T) {
	root := tree(t, "proj/.git/config")
	proj := filepath.Join(root, "proj")
	spec := &plan.Spec{
		Hostname:   "jail",
		Namespaces: plan.Namespaces{User: true, Mount: true, PID: true, IPC: true, UTS: true, Net: true},
		Network:    plan.Network{Mode: "none"},
		Landlock:   plan.Landlock{Mode: "best-effort", Read: []string{"/usr", "/proc", "/home/u"}, Write: []string{proj, "/tmp", "/dev"}, List: []string{"/"}},
		Mounts: []plan.Mount{
			{Kind: plan.MountROBind, Source: "/usr", Target: "/usr"},
			{Kind: plan.MountTmpfs, Target: "/tmp"},
			{Kind: plan.MountDir, Target: "/home/u"},
			{Kind: plan.MountProc, Target: "/proc"},
			{Kind: plan.MountDev, Target: "/dev"},
			{Kind: plan.MountBind, Source: proj, Target: proj},
			{Kind: plan.MountROBind, Source: proj + "/.git", Target: proj + "/.git"},
			{Kind: plan.MountProtect, Source: proj + "/.git/config", Target: proj + "/.git/config"},
		},
	}
	p, err := planFallback(spec, 7)
	if err != nil {
		t.Fatal(err)
	}
	lost := strings.Join(p.Lost, "\n")
	for _, want := range []string{"protect " + proj + "/.git/config", "read-only " + proj + "/.git:", "pid isolation", "file metadata"} {
		if !strings.Contains(lost, want) {
			t.Errorf("lost does not name %q:\n%s", want, lost)
		}
	}
	if strings.Contains(lost, "read-only /usr") {
		t.Errorf("a read-only grant beneath no writable one counted lost:\n%s", lost)
	}
	// Network none on ABI 7: carried by seccomp and Landlock, so neither unix sockets by path
	// nor abstract sockets are counted lost.
	if strings.Contains(lost, "unix sockets") {
		t.Errorf("network none should carry unix sockets: %s", lost)
	}
	if !p.Landlock.RestrictTCP || !slices.Contains(p.DenySyscalls, "socket") || !slices.Contains(p.DenySyscalls, "shmget") {
		t.Errorf("network none / ipc: RestrictTCP %v, deny %q", p.Landlock.RestrictTCP, p.DenySyscalls)
	}
	if slices.Contains(p.Landlock.Write, "/tmp") || slices.Contains(p.Landlock.Write, "/dev") || slices.Contains(p.Landlock.Read, "/home/u") {
		t.Errorf("a sandbox-only mount became a host grant: read %q write %q", p.Landlock.Read, p.Landlock.Write)
	}
	if slices.Contains(p.Landlock.List, "/") {
		t.Errorf("the new root's List / became a host grant: %q", p.Landlock.List)
	}
	if p.PrivateTmp != "/tmp" || !slices.Contains(p.Landlock.Write, "/dev/null") || !slices.Contains(p.Landlock.Write, proj) {
		t.Errorf("private tmp %q, write %q", p.PrivateTmp, p.Landlock.Write)
	}
}

func TestPlanFallbackOldKernel(t *testing.T) {
	spec := &plan.Spec{Network: plan.Network{Mode: "host"}, Landlock: plan.Landlock{Mode: "off"}}
	p, err := planFallback(spec, 3)
	if err != nil {
		t.Fatal(err)
	}
	lost := strings.Join(p.Lost, "\n")
	for _, want := range []string{`mode = "off"`, "signals to host processes", "abstract unix sockets", "unix sockets by path"} {
		if !strings.Contains(lost, want) {
			t.Errorf("lost does not name %q:\n%s", want, lost)
		}
	}
}

func TestFallbackWorkingDirectoryAtHome(t *testing.T) {
	home := tree(t, "src/main.go")
	spec := &plan.Spec{
		Landlock: plan.Landlock{Mode: "best-effort", Write: []string{home, home}},
		Mounts: []plan.Mount{
			{Kind: plan.MountTmpfs, Target: home},
			{Kind: plan.MountBind, Source: home, Target: home},
		},
	}
	p, err := planFallback(spec, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(p.Landlock.Write, home) {
		t.Errorf("the working directory bound over the home tmpfs lost its grant: %q", p.Landlock.Write)
	}
}

func TestCarveLeavesOutUnlistableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root lists every directory")
	}
	root := tree(t, "locked/secret", "locked/other", "open")
	locked := filepath.Join(root, "locked")
	if err := os.Chmod(locked, 0o300); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o755)
	var ll landlock.Config
	got, _, err := carve([]string{root}, []string{filepath.Join(locked, "secret")}, map[string]bool{filepath.Join(locked, "secret"): true}, &ll)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(root, "open")}; !slices.Equal(got, want) {
		t.Errorf("grants %q, want %q (the unlistable directory left out)", got, want)
	}
}
