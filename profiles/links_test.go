package profiles

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
	"github.com/jail-sandbox/jail/plan"
)

// A grant naming a symlink that lies inside another bind: a read grant whose destination is
// visible anyway disappears; otherwise the grant moves to the link's destination.
func TestLinkGrantBeneathBind(t *testing.T) {
	host := testHost(t)
	etc, usr := filepath.Join(host.Cwd, "etc"), filepath.Join(host.Cwd, "usr")
	testutil.WriteFile(t, filepath.Join(usr, "zone"), "UTC")
	mkdir(t, etc)
	link := filepath.Join(etc, "localtime")
	if err := os.Symlink(filepath.Join(usr, "zone"), link); err != nil {
		t.Fatal(err)
	}
	find := func(spec *plan.Spec, target string) *plan.Mount {
		for i, m := range spec.Mounts {
			if m.Target == target {
				return &spec.Mounts[i]
			}
		}
		return nil
	}
	spec := mustResolve(t, host, `[filesystem]
read = ["`+etc+`", "`+usr+`", "`+link+`"]`)
	if m := find(spec, link); m != nil {
		t.Errorf("read grant of a link inside a bind kept: %+v", m)
	}
	spec = mustResolve(t, host, `[filesystem]
read = ["`+etc+`", "`+usr+`"]
write = ["`+link+`"]`)
	if m := find(spec, filepath.Join(usr, "zone")); m == nil || m.Kind != plan.MountBind || find(spec, link) != nil {
		t.Errorf("write grant of a link inside a bind not moved to its destination: %+v", spec.Mounts)
	}
	// On a fresh tmpfs the grant stays at the link's own path.
	spec = mustResolve(t, host, `[filesystem]
read = ["`+link+`"]`)
	if m := find(spec, link); m == nil || m.Source != filepath.Join(usr, "zone") {
		t.Errorf("link grant on the tmpfs root: %+v", spec.Mounts)
	}
}

// TestGrantThroughSymlinkIsPhysical: a grant of a symlink to the home is the home itself, so the
// hides apply there; the link is recreated, pointing at it.
func TestGrantThroughSymlinkIsPhysical(t *testing.T) {
	host := testHost(t)
	testutil.WriteFile(t, host.Home+"/.ssh/id_ed25519", "KEY")
	link := filepath.Join(t.TempDir(), "hl")
	symlink(t, host.Home, link)
	spec := mustResolve(t, host, `[filesystem]
read = ["`+link+`"]
hide = ["~/.ssh"]
`)
	if got := find(spec, host.Home); len(got) != 1 || got[0].Kind != plan.MountROBind || got[0].Source != host.Home {
		t.Errorf("the grant is not at the physical path: %+v", got)
	}
	if got := find(spec, host.Home+"/.ssh"); len(got) != 1 || got[0].Kind != plan.MountHideDir {
		t.Errorf("~/.ssh not hidden: %+v", got)
	}
	if got := find(spec, link); len(got) != 1 || got[0] != (plan.Mount{Kind: plan.MountSymlink, Source: host.Home, Target: link}) {
		t.Errorf("the link is not recreated: %+v", got)
	}
}

// TestWorkingDirectoryThroughSymlink: a working directory reached through a symlink is planned
// at its physical path, with its protections; the link to it is recreated.
func TestWorkingDirectoryThroughSymlink(t *testing.T) {
	host := testHost(t)
	real := host.Cwd
	testutil.WriteFile(t, real+"/.envrc", "x")
	host.Cwd = filepath.Join(t.TempDir(), "pl")
	symlink(t, real, host.Cwd)
	spec := mustResolve(t, host, "[filesystem]\nwrite = [\"$CWD\"]\nprotect = [\"$CWD/.envrc\", \"$CWD/.vscode/\"]\n")
	if spec.Cwd != real {
		t.Errorf("cwd %q, want the physical %q", spec.Cwd, real)
	}
	for _, want := range []plan.Mount{
		{Kind: plan.MountBind, Source: real, Target: real, IsDir: true},
		{Kind: plan.MountProtect, Source: real + "/.envrc", Target: real + "/.envrc"},
		{Kind: plan.MountProtect, Source: real + "/.vscode", Target: real + "/.vscode", IsDir: true, Create: true},
		{Kind: plan.MountSymlink, Source: real, Target: host.Cwd},
	} {
		if !slices.Contains(spec.Mounts, want) {
			t.Errorf("missing %+v in %+v", want, spec.Mounts)
		}
	}
	if len(spec.Warnings) != 0 {
		t.Errorf("warnings %q", spec.Warnings)
	}
}

// TestHideWinsBeneath: a grant inside a hidden path, or of a file a hidden path names, loses to
// the mask — a read grant with a warning, a writable one with an error — however it is named.
func TestHideWinsBeneath(t *testing.T) {
	host := testHost(t)
	testutil.WriteFile(t, host.Home+"/.ssh/id_ed25519", "KEY")
	dir := t.TempDir()
	symlink(t, host.Home+"/.ssh/id_ed25519", dir+"/key")
	symlink(t, host.Home+"/.ssh", dir+"/ssh")
	for _, grant := range []string{dir + "/key", dir + "/ssh", host.Home + "/.ssh/id_ed25519"} {
		spec := mustResolve(t, host, "[filesystem]\nread = [\""+grant+"\"]\nhide = [\"~/.ssh\"]\n")
		for _, m := range spec.Mounts {
			if (m.Kind == plan.MountROBind || m.Kind == plan.MountBind) && within(m.Source, host.Home+"/.ssh") &&
				(m.Target != host.Home+"/.ssh" || len(find(spec, m.Target)) != 2) { // ~/.ssh itself stays, under the mask
				t.Errorf("%s: the key is still granted: %+v", grant, m)
			}
		}
		if len(spec.Warnings) != 1 || !strings.Contains(spec.Warnings[0], "the mask wins") {
			t.Errorf("%s: warnings %q", grant, spec.Warnings)
		}
		_, err := resolve(t, host, "[filesystem]\nwrite = [\""+grant+"\"]\nhide = [\"~/.ssh\"]\n")
		wantError(t, err, "test.toml", 3, "filesystem.hide", "granted as bind")
	}
}

// TestProtectWinsBeneath: a writable grant inside a protected path would undo it: an error, also
// when the grant is named through a symlink.
func TestProtectWinsBeneath(t *testing.T) {
	host := testHost(t)
	mkdir(t, host.Cwd+"/.vscode/sub")
	link := filepath.Join(t.TempDir(), "v")
	symlink(t, host.Cwd+"/.vscode/sub", link)
	_, err := resolve(t, host, "[filesystem]\nwrite = [\"$CWD\", \""+link+"\"]\nprotect = [\"$CWD/.vscode/\"]\n")
	wantError(t, err, "test.toml", 3, "filesystem.protect", "beneath it is granted write")
}

// TestSymlinkCycle: a cycle of symlinks is an error naming the path, not a hang.
func TestSymlinkCycle(t *testing.T) {
	host := testHost(t)
	dir := t.TempDir()
	symlink(t, dir+"/b", dir+"/a")
	symlink(t, dir+"/a", dir+"/b")
	_, err := resolve(t, host, "[filesystem]\nread = [\""+dir+"/a/x\"]\n")
	wantError(t, err, "test.toml", 2, "filesystem.read", "too many levels of symbolic links")
}
