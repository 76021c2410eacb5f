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

// TestSymlinkResolution: a directory grant sits at its physical path, and the symlink it was
// named through is recreated inside, pointing there; a file grant whose final name is a symlink
// sits at the link's place (on the tmpfs root); a read grant inside a read grant of the same
// tree adds nothing and is dropped.
func TestSymlinkResolution(t *testing.T) {
	host := testHost(t)
	dir := t.TempDir()
	mkdir(t, dir+"/real/sub")
	testutil.WriteFile(t, dir+"/real/file", "x")
	symlink(t, "real", dir+"/link")       // a symlinked directory
	symlink(t, "real/file", dir+"/flink") // a symlinked file
	spec := mustResolve(t, host, "[filesystem]\nread = [\""+dir+"/link\", \""+dir+"/link/sub\", \""+dir+"/flink\"]\n")
	for _, want := range []plan.Mount{
		{Kind: plan.MountROBind, Source: dir + "/real", Target: dir + "/real", IsDir: true},
		{Kind: plan.MountSymlink, Source: dir + "/real", Target: dir + "/link"},
		{Kind: plan.MountROBind, Source: dir + "/real/file", Target: dir + "/flink"},
	} {
		if !slices.Contains(spec.Mounts, want) {
			t.Errorf("missing %+v in %+v", want, spec.Mounts)
		}
	}
	if got := find(spec, dir+"/real/sub"); len(got) != 0 {
		t.Errorf("a read grant inside a read grant of the same tree kept: %+v", got)
	}
}

func TestOptionalPaths(t *testing.T) {
	host := testHost(t)
	spec := mustResolve(t, host, "[filesystem]\nread = [\"/nonexistent/jail-x?\"]\ntmpfs = [\"/nonexistent/jail-y?\"]\n")
	for _, m := range spec.Mounts {
		if strings.HasPrefix(m.Target, "/nonexistent") {
			t.Errorf("optional missing path kept: %+v", m)
		}
	}
	_, err := resolve(t, host, "[filesystem]\nwrite = [\"/nonexistent/jail-x\"]\n")
	wantError(t, err, "test.toml", 2, "filesystem.write", "missing required path /nonexistent/jail-x")
}

// TestMountOrder: shallow targets first, stable; at one target the grant before the mask.
func TestMountOrder(t *testing.T) {
	host := testHost(t)
	dir := t.TempDir()
	mkdir(t, dir+"/a/b/c")
	mkdir(t, dir+"/secret")
	spec := mustResolve(t, host, `[filesystem]
hide = ["`+dir+`/a/b/c"]
read = ["`+dir+`/a/b/c", "`+dir+`/a/b", "`+dir+`"]
write = ["`+dir+`/a"]
`)
	var got []string
	for _, m := range spec.Mounts {
		if strings.HasPrefix(m.Target, dir) {
			got = append(got, string(m.Kind)+" "+strings.TrimPrefix(m.Target, dir))
		}
	}
	want := []string{"ro-bind ", "bind /a", "ro-bind /a/b", "ro-bind /a/b/c", "hide-dir /a/b/c"}
	if !slices.Equal(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}
	depth := -1
	for _, m := range spec.Mounts {
		d := strings.Count(m.Target, "/")
		if d < depth {
			t.Errorf("%s comes after a deeper target", m.Target)
		}
		depth = d
	}
}

// TestProtect: existing paths are rebound read-only, missing ones are marked for placeholders (a
// directory for a trailing /, as Mount.IsDir says), directories between the grant and the path
// become self-binds.
func TestProtect(t *testing.T) {
	host := testHost(t)
	cwd := host.Cwd
	mkdir(t, cwd+"/.git/objects")
	testutil.WriteFile(t, cwd+"/.git/config", "")
	mkdir(t, cwd+"/.vscode")
	spec := mustResolve(t, host, `[filesystem]
write = ["$CWD"]
protect = ["$CWD/.git/hooks/?", "$CWD/.git/config?", "$CWD/.envrc", "$CWD/.vscode/", "$CWD/.idea/", "$CWD/deep/er/file"]
`)
	for _, want := range []plan.Mount{
		{Kind: plan.MountBind, Source: cwd, Target: cwd, IsDir: true},
		{Kind: plan.MountBind, Source: cwd + "/.git", Target: cwd + "/.git", IsDir: true},
		{Kind: plan.MountProtect, Source: cwd + "/.git/hooks", Target: cwd + "/.git/hooks", IsDir: true, Create: true},
		{Kind: plan.MountProtect, Source: cwd + "/.git/config", Target: cwd + "/.git/config"},
		{Kind: plan.MountProtect, Source: cwd + "/.envrc", Target: cwd + "/.envrc", Create: true},
		{Kind: plan.MountProtect, Source: cwd + "/.vscode", Target: cwd + "/.vscode", IsDir: true},
		{Kind: plan.MountProtect, Source: cwd + "/.idea", Target: cwd + "/.idea", IsDir: true, Create: true},
		{Kind: plan.MountBind, Source: cwd + "/deep", Target: cwd + "/deep", IsDir: true, Create: true},
		{Kind: plan.MountBind, Source: cwd + "/deep/er", Target: cwd + "/deep/er", IsDir: true, Create: true},
		{Kind: plan.MountProtect, Source: cwd + "/deep/er/file", Target: cwd + "/deep/er/file", Create: true},
	} {
		if !slices.Contains(spec.Mounts, want) {
			t.Errorf("missing %+v", want)
		}
	}
	if _, err := os.Stat(cwd + "/.envrc"); err == nil {
		t.Error("Resolve created a placeholder; that is the host's job when it runs the plan (package placeholder)")
	}
}

// TestProtectNested: protecting a directory and a path inside it, in either order.
func TestProtectNested(t *testing.T) {
	host := testHost(t)
	mkdir(t, host.Cwd+"/.git/hooks")
	for _, order := range []string{`"$CWD/.git/hooks/", "$CWD/.git/"`, `"$CWD/.git/", "$CWD/.git/hooks/"`} {
		spec := mustResolve(t, host, "[filesystem]\nwrite = [\"$CWD\"]\nprotect = ["+order+"]\n")
		for _, dir := range []string{"/.git", "/.git/hooks"} {
			got := find(spec, host.Cwd+dir)
			if len(got) == 0 || got[len(got)-1].Kind != plan.MountProtect {
				t.Errorf("%s: %s: %+v", order, dir, got)
			}
		}
	}
}

// TestProtectUnwritable: a missing path the user cannot create needs no placeholder.
func TestProtectUnwritable(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root can create anything; run as an ordinary user")
	}
	host := testHost(t)
	mkdir(t, host.Cwd+"/ro")
	if err := os.Chmod(host.Cwd+"/ro", 0o555); err != nil {
		t.Fatal(err)
	}
	spec := mustResolve(t, host, "[filesystem]\nwrite = [\"$CWD\"]\nprotect = [\"$CWD/ro/.envrc\", \"$CWD/.envrc\"]\n")
	if got := find(spec, host.Cwd+"/ro/.envrc"); len(got) != 0 {
		t.Errorf("placeholder in an unwritable directory: %+v", got)
	}
	if got := find(spec, host.Cwd+"/.envrc"); len(got) != 1 {
		t.Errorf("no placeholder in a writable directory: %+v", got)
	}
}

func TestProtectSkipsMissingRepository(t *testing.T) {
	host := testHost(t) // no .git: optional .git entries are dropped so `git init` works
	spec := mustResolve(t, host, "[filesystem]\nwrite = [\"$CWD\"]\nprotect = [\"$CWD/.git/hooks/?\", \"$CWD/.git/config?\"]\n")
	for _, m := range spec.Mounts {
		if strings.Contains(m.Target, ".git") {
			t.Errorf("unexpected %+v", m)
		}
	}
}

func TestMaskConflicts(t *testing.T) {
	host := testHost(t)
	symlink(t, "/etc/passwd", host.Cwd+"/.envrc")
	_, err := resolve(t, host, "[filesystem]\nwrite = [\"$CWD\"]\nprotect = [\"$CWD/.envrc\"]\n")
	wantError(t, err, "test.toml", 3, "filesystem.protect", "is a symlink")

	_, err = resolve(t, host, "[filesystem]\nwrite = [\"$CWD\"]\nhide = [\"$CWD\"]\n")
	wantError(t, err, "test.toml", 3, "filesystem.hide", "both hidden and granted as bind")

	_, err = resolve(t, host, "[filesystem]\nwrite = [\"$CWD\"]\nprotect = [\"$CWD\"]\n")
	wantError(t, err, "test.toml", 3, "filesystem.protect", "both protected and granted write")
}

// TestHide: a hide beneath a bind masks (dir or file kind); one elsewhere, or of a missing
// path, is dropped; hiding a read grant itself wins with a warning.
func TestHide(t *testing.T) {
	host := testHost(t)
	mkdir(t, host.Cwd+"/secrets")
	testutil.WriteFile(t, host.Cwd+"/.env", "TOKEN=x")
	spec := mustResolve(t, host, `[filesystem]
read = ["$CWD", "/usr"]
hide = ["$CWD/secrets", "$CWD/.env", "$CWD/missing", "/var/log", "/usr"]
`)
	cwd := host.Cwd
	if got := find(spec, cwd+"/secrets"); len(got) != 1 || got[0].Kind != plan.MountHideDir {
		t.Errorf("secrets: %+v", got)
	}
	if got := find(spec, cwd+"/.env"); len(got) != 1 || got[0].Kind != plan.MountHideFile {
		t.Errorf(".env: %+v", got)
	}
	if len(find(spec, cwd+"/missing")) != 0 || len(find(spec, "/var/log")) != 0 {
		t.Error("kept a hide of a missing or ungranted path")
	}
	if got := find(spec, "/usr"); len(got) != 2 || got[1].Kind != plan.MountHideDir {
		t.Errorf("/usr: %+v", got)
	}
	if len(spec.Warnings) != 1 || !strings.Contains(spec.Warnings[0], "the mask wins") {
		t.Errorf("warnings %q", spec.Warnings)
	}
}

// TestAlwaysPresent: /proc, /dev, the merged-/usr links and a home directory come with every
// profile, even an empty one.
func TestAlwaysPresent(t *testing.T) {
	host := testHost(t)
	spec := mustResolve(t, host, "")
	if len(find(spec, "/proc")) != 1 || len(find(spec, "/dev")) != 1 {
		t.Errorf("no proc or dev: %+v", spec.Mounts)
	}
	if got := find(spec, host.Home); len(got) != 1 || got[0].Kind != plan.MountDir {
		t.Errorf("home: %+v", got)
	}
	for _, link := range systemLinks {
		text, err := os.Readlink(link)
		if err != nil {
			continue // not a symlink on this host
		}
		if got := find(spec, link); len(got) != 1 || got[0] != (plan.Mount{Kind: plan.MountSymlink, Source: text, Target: link}) {
			t.Errorf("%s: %+v", link, got)
		}
	}
	if spec.Cwd != "/" {
		t.Errorf("cwd %q: the host's working directory is not granted", spec.Cwd)
	}
}

func TestGrantWins(t *testing.T) {
	host := testHost(t)
	spec := mustResolve(t, host, "[filesystem]\nread = [\"$CWD\"]\nwrite = [\"$CWD\"]\ntmpfs = [\"$CWD\"]\n")
	if got := find(spec, host.Cwd); len(got) != 1 || got[0].Kind != plan.MountBind {
		t.Errorf("%+v", got)
	}
	if len(spec.Warnings) != 1 || !strings.Contains(spec.Warnings[0], "replaces the tmpfs") {
		t.Errorf("warnings %q", spec.Warnings)
	}
	if spec.Cwd != host.Cwd {
		t.Errorf("cwd %q", spec.Cwd)
	}
	if !slices.Contains(spec.Landlock.Write, host.Cwd) || slices.Contains(spec.Landlock.Read, host.Cwd) {
		t.Errorf("landlock %+v", spec.Landlock)
	}
}

func TestWriteRootWarns(t *testing.T) {
	spec := mustResolve(t, testHost(t), "[filesystem]\nwrite = [\"/\"]\n")
	if len(spec.Warnings) != 1 || !strings.Contains(spec.Warnings[0], "whole host filesystem is writable") {
		t.Errorf("warnings %q", spec.Warnings)
	}
}

func TestPhysicalKeepsMissingTail(t *testing.T) {
	dir := t.TempDir()
	symlink(t, dir, dir+"/self")
	got, err := newResolver().physical(filepath.Join(dir, "self/missing/x"))
	if err != nil || got != dir+"/missing/x" {
		t.Errorf("got %q, %v", got, err)
	}
}
