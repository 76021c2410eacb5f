package profiles

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
	"github.com/jail-sandbox/jail/plan"
)

// agentSpec resolves the built-in agent profile on host.
func agentSpec(t *testing.T, host Host) *plan.Spec {
	t.Helper()
	_, spec := builtinSpec(t, "agent", host)
	return spec
}

// builtinSpec loads and resolves the built-in profile name on host.
func builtinSpec(t *testing.T, name string, host Host) (*Profile, *plan.Spec) {
	t.Helper()
	p, err := Load(name, host)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := Resolve(p, host, []string{"true"})
	if err != nil {
		t.Fatal(err)
	}
	return p, spec
}

// readOnlyAt reports whether the last mount at target makes it read-only.
func readOnlyAt(spec *plan.Spec, target string) bool {
	got := find(spec, target)
	return len(got) > 0 && (got[len(got)-1].Kind == plan.MountROBind || got[len(got)-1].Kind == plan.MountProtect)
}

// noWritableBeneath fails when a writable bind lies at or beneath dir.
func noWritableBeneath(t *testing.T, spec *plan.Spec, dir string) {
	t.Helper()
	for _, m := range spec.Mounts {
		if m.Kind == plan.MountBind && within(m.Target, dir) {
			t.Errorf("writable inside %s: %+v", dir, m)
		}
	}
}

// TestRepositoryFromSubdirectory: from a subdirectory, the top level and the git directory are
// read-only, the working directory writable, and a .git cannot be created there.
func TestRepositoryFromSubdirectory(t *testing.T) {
	host := testHost(t)
	top := host.Cwd
	gitInit(t, top)
	mkdir(t, top+"/a/b")
	host.Cwd = top + "/a/b"
	r, err := host.repository(newResolver())
	if err != nil || r == nil || r.top != top || r.gitDir != top+"/.git" || r.commonDir != top+"/.git" {
		t.Fatalf("repository %+v, %v", r, err)
	}
	spec := agentSpec(t, host)
	if got := find(spec, top); len(got) != 1 || got[0].Kind != plan.MountROBind {
		t.Errorf("top level: %+v", got)
	}
	if got := find(spec, host.Cwd); len(got) != 1 || got[0].Kind != plan.MountBind {
		t.Errorf("working directory: %+v", got)
	}
	want := plan.Mount{Kind: plan.MountProtect, Source: host.Cwd + "/.git", Target: host.Cwd + "/.git", IsDir: true, Create: true}
	if !slices.Contains(spec.Mounts, want) {
		t.Errorf("no placeholder .git in the working directory: %+v", spec.Mounts)
	}
	noWritableBeneath(t, spec, top+"/.git")
	if len(spec.Warnings) != 0 {
		t.Errorf("warnings %q", spec.Warnings)
	}
}

// TestLinkedWorktree: a worktree git made is followed to its common directory, which is
// read-only, and its .git file is protected.
func TestLinkedWorktree(t *testing.T) {
	host := testHost(t)
	main := t.TempDir()
	gitInit(t, main, []string{"commit", "-q", "--allow-empty", "-m", "one"}, []string{"worktree", "add", "-q", host.Cwd + "/wt"})
	host.Cwd += "/wt"
	r, err := host.repository(newResolver())
	if err != nil || r == nil || r.gitDir != main+"/.git/worktrees/wt" || r.commonDir != main+"/.git" || r.top != host.Cwd {
		t.Fatalf("repository %+v, %v", r, err)
	}
	spec := agentSpec(t, host)
	if !readOnlyAt(spec, main+"/.git") {
		t.Errorf("common directory not read-only: %+v", find(spec, main+"/.git"))
	}
	if got := find(spec, host.Cwd+"/.git"); len(got) != 1 || got[0].Kind != plan.MountProtect {
		t.Errorf(".git file not protected: %+v", got)
	}
	noWritableBeneath(t, spec, main+"/.git")
}

// TestPlantedPointersRefused: a .git file or commondir an earlier sandbox could have written
// decides nothing: one naming the home, a git directory outside any layout git makes, or a
// commondir in a plain repository is refused with a warning, and grants nothing.
func TestPlantedPointersRefused(t *testing.T) {
	for name, plant := range map[string]func(t *testing.T, host Host) string{
		"gitdir home": func(t *testing.T, host Host) string {
			testutil.WriteFile(t, host.Cwd+"/.git", "gitdir: "+host.Home+"\n")
			return "not a git directory"
		},
		"gitdir home looking like a repository": func(t *testing.T, host Host) string {
			gitInit(t, host.Home) // a dotfiles repository at ~: ~/.git is a git directory
			testutil.WriteFile(t, host.Cwd+"/.git", "gitdir: "+host.Home+"/.git\n")
			return "neither a linked worktree nor a submodule"
		},
		"gitdir elsewhere": func(t *testing.T, host Host) string {
			other := t.TempDir()
			gitInit(t, other)
			testutil.WriteFile(t, host.Cwd+"/.git", "gitdir: "+other+"/.git\n")
			return "neither a linked worktree nor a submodule"
		},
		"commondir": func(t *testing.T, host Host) string {
			gitInit(t, host.Cwd)
			testutil.WriteFile(t, host.Cwd+"/.git/commondir", host.Home+"\n")
			return "not a git directory"
		},
		"commondir to a repository": func(t *testing.T, host Host) string {
			gitInit(t, host.Cwd)
			other := t.TempDir()
			gitInit(t, other)
			testutil.WriteFile(t, host.Cwd+"/.git/commondir", other+"/.git\n")
			return "not the linked-worktree layout"
		},
		"worktree commondir": func(t *testing.T, host Host) string {
			main := t.TempDir()
			gitInit(t, main, []string{"commit", "-q", "--allow-empty", "-m", "one"}, []string{"worktree", "add", "-q", host.Cwd + "/wt"})
			gitInit(t, host.Home)
			testutil.WriteFile(t, main+"/.git/worktrees/wt/commondir", host.Home+"/.git\n")
			return "not the linked-worktree layout"
		},
		"home holds shell files": func(t *testing.T, host Host) string {
			gitInit(t, host.Cwd)
			testutil.WriteFile(t, host.Cwd+"/.git/.bashrc", "")
			return "holds .bashrc"
		},
	} {
		t.Run(name, func(t *testing.T) {
			host := testHost(t)
			want := plant(t, host)
			if isDir(host.Cwd + "/wt") {
				host.Cwd += "/wt"
			}
			spec := agentSpec(t, host)
			if len(spec.Warnings) != 1 || !strings.HasPrefix(spec.Warnings[0], "git: ") || !strings.Contains(spec.Warnings[0], want) {
				t.Errorf("warnings %q, want one saying %q", spec.Warnings, want)
			}
			for _, m := range spec.Mounts {
				if (m.Kind == plan.MountBind || m.Kind == plan.MountROBind) && within(host.Home, m.Source) && m.Source != "/" {
					t.Errorf("a grant holds the home: %+v", m)
				}
				isCache := spec.Caches != nil && m.Target == spec.Caches.Dir // jail's own, cache.go
				if m.Kind == plan.MountBind && m.Target != host.Cwd && !strings.HasPrefix(m.Target, host.Cwd+"/") && !isCache {
					t.Errorf("a writable grant outside the working directory: %+v", m)
				}
			}
		})
	}
}

// TestWriteInsideGitDirRefused: a write grant inside the git directory, including a working
// directory there, is an error while git.mode keeps it read-only; git.mode = "off" allows it.
func TestWriteInsideGitDirRefused(t *testing.T) {
	host := testHost(t)
	gitInit(t, host.Cwd)
	_, err := resolve(t, host, "[filesystem]\nwrite = [\"$CWD\", \"$CWD/.git/hooks\"]\n")
	wantError(t, err, "test.toml", 0, "git.mode", "inside the repository's git directory")
	host.Cwd += "/.git"
	_, err = resolve(t, host, "[filesystem]\nwrite = [\"$CWD\"]\n")
	wantError(t, err, "test.toml", 0, "git.mode", "keeps read-only (run from the work tree)")
	mustResolve(t, host, "[filesystem]\nwrite = [\"$CWD\"]\n[git]\nmode = \"off\"\n")
}

// TestSubmodulesProtected: each gitlink in the index gets its .git protected — a submodule's
// .git file, and a placeholder where the path has none, also where the directory is missing.
func TestSubmodulesProtected(t *testing.T) {
	host := testHost(t)
	top := host.Cwd
	gitInit(t, top,
		[]string{"update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,lib"},
		[]string{"update-index", "--add", "--cacheinfo", "160000,2222222222222222222222222222222222222222,deep/er/mod"})
	mkdir(t, top+"/lib")
	spec := agentSpec(t, host)
	for _, want := range []plan.Mount{
		{Kind: plan.MountBind, Source: top + "/lib", Target: top + "/lib", IsDir: true},
		{Kind: plan.MountProtect, Source: top + "/lib/.git", Target: top + "/lib/.git", IsDir: true, Create: true},
		{Kind: plan.MountBind, Source: top + "/deep/er/mod", Target: top + "/deep/er/mod", IsDir: true, Create: true},
		{Kind: plan.MountProtect, Source: top + "/deep/er/mod/.git", Target: top + "/deep/er/mod/.git", IsDir: true, Create: true},
	} {
		if !slices.Contains(spec.Mounts, want) {
			t.Errorf("missing %+v in %+v", want, spec.Mounts)
		}
	}
}

// TestIndexFormats: gitlinks are read from every index format git writes: versions 2, 3
// (extended flags) and 4 (prefix-compressed names), split indexes, SHA-256 object names.
func TestIndexFormats(t *testing.T) {
	for name, setup := range map[string][][]string{
		"v2":     {{"update-index", "--index-version", "2"}},
		"v3":     {{"update-index", "--index-version", "3"}, {"update-index", "--skip-worktree", "a/one"}},
		"v4":     {{"update-index", "--index-version", "4"}},
		"split":  {{"update-index", "--split-index"}, {"update-index", "--add", "--cacheinfo", "160000,3333333333333333333333333333333333333333,z/late"}},
		"sha256": nil,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			init := [][]string{{"init", "-q"}}
			hash := "4444444444444444444444444444444444444444"
			if name == "sha256" {
				init = [][]string{{"init", "-q", "--object-format=sha256"}}
				hash = strings.Repeat("4", 64)
			}
			testutil.WriteFile(t, dir+"/a/one", "1")
			testutil.WriteFile(t, dir+"/a/two", "2")
			steps := append(init[1:], []string{"add", "a"}, []string{"update-index", "--add", "--cacheinfo", "160000," + hash + ",a/sub"})
			cmd := init[0]
			gitInitWith(t, dir, cmd, append(steps, setup...)...)
			got, err := gitlinks(dir + "/.git")
			want := []string{"a/sub"}
			if name == "split" {
				want = []string{"z/late", "a/sub"}
			}
			slices.Sort(got)
			slices.Sort(want)
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("gitlinks = %q, %v; want %q", got, err, want)
			}
		})
	}
	if links, err := gitlinks(t.TempDir()); err != nil || links != nil {
		t.Errorf("no index: %q, %v", links, err)
	}
	bad := t.TempDir()
	testutil.WriteFile(t, bad+"/index", "DIRC\x00\x00\x00\x02\x00\x00\x00\x05garbage")
	if _, err := gitlinks(bad); err == nil {
		t.Error("a truncated index parsed")
	}
}

// TestRepositoryHomeRefused: a repository whose top level is the home (a dotfiles repository)
// is not granted: it would show the whole home.
func TestRepositoryHomeRefused(t *testing.T) {
	host := testHost(t)
	gitInit(t, host.Home)
	host.Cwd = host.Home + "/proj"
	mkdir(t, host.Cwd)
	spec := agentSpec(t, host)
	if len(spec.Warnings) != 1 || !strings.Contains(spec.Warnings[0], "holds the home directory") {
		t.Errorf("warnings %q", spec.Warnings)
	}
	if got := find(spec, host.Home); len(got) != 1 || got[0].Kind != plan.MountTmpfs {
		t.Errorf("home: %+v", got)
	}
}

// TestCommitModePlan: agent-commit puts an overlay on the common directory, its layers in the
// run's directory under $TMPDIR, with the work tree's protected names for the import; nothing
// else of the git directory is writable, and profile show flags it.
func TestCommitModePlan(t *testing.T) {
	host := testHost(t)
	host.TmpDir, host.RunID = t.TempDir(), "r1"
	gitInit(t, host.Cwd)
	p, spec := builtinSpec(t, "agent-commit", host)
	dir := host.TmpDir + "/jail-git-r1"
	want := plan.Mount{Kind: plan.MountOverlay, Source: host.Cwd + "/.git", Target: host.Cwd + "/.git", IsDir: true, Upper: dir + "/upper", Work: dir + "/work"}
	if got := find(spec, host.Cwd+"/.git"); len(got) != 1 || got[0] != want {
		t.Errorf(".git: %+v, want %+v", got, want)
	}
	g := spec.Git
	if g == nil || g.Mode != "commit" || g.Import == nil || g.Import.Dir != dir || g.Import.Refs != "refs/jail/r1/" ||
		!slices.Contains(g.Import.Protected, ".envrc") || !slices.Contains(g.Import.Protected, ".gitmodules") {
		t.Errorf("git plan %+v", g)
	}
	if !slices.Contains(spec.Landlock.Write, host.Cwd+"/.git") {
		t.Errorf("landlock write %q lacks the overlay", spec.Landlock.Write)
	}
	e, err := Expand(p, host)
	if err != nil {
		t.Fatal(err)
	}
	text, err := Format(e)
	if err != nil || !strings.Contains(string(text), `# WIDENS: git.mode = "commit"`) {
		t.Errorf("profile show: %v\n%s", err, text)
	}
}

// TestSubmoduleRepositories: run inside a submodule's checkout, in a superproject or in a linked
// worktree of one, the submodule's git directory (where git keeps it) is followed; nested
// submodules of the superproject get their .git protected.
func TestSubmoduleRepositories(t *testing.T) {
	host := testHost(t)
	sub := t.TempDir()
	gitInit(t, sub, []string{"commit", "-q", "--allow-empty", "-m", "s"})
	inner := t.TempDir()
	gitInit(t, inner, []string{"commit", "-q", "--allow-empty", "-m", "i"})
	gitInit(t, sub, []string{"-c", "protocol.file.allow=always", "submodule", "add", "-q", inner, "inner"}, []string{"commit", "-q", "-m", "inner"})
	super := host.Cwd
	gitInit(t, super, []string{"-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "lib"}, []string{"commit", "-q", "-m", "lib"},
		[]string{"-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init", "--recursive"},
		[]string{"worktree", "add", "-q", super + "/../wt"})
	wt := filepath.Clean(super + "/../wt")
	gitInit(t, wt, []string{"-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init"})

	spec := agentSpec(t, host)
	if got := find(spec, super+"/lib/inner/.git"); len(got) != 1 || got[0].Kind != plan.MountProtect {
		t.Errorf("nested submodule's .git: %+v", got)
	}
	for _, dir := range []string{super + "/lib", wt + "/lib"} {
		host.Cwd = dir
		r, err := host.repository(newResolver())
		if err != nil || r == nil || r.top != dir {
			t.Errorf("in %s: repository %+v, %v", dir, r, err)
		}
	}
}

// TestRefusedRepositoryStaysProtected: a repository refused for its grants (here the home's,
// with the home as the working directory and granted by name) keeps its .git read-only where a
// grant makes it writable.
func TestRefusedRepositoryStaysProtected(t *testing.T) {
	host := testHost(t)
	gitInit(t, host.Home)
	host.Cwd = host.Home
	spec, err := agentWith(t, host, "~")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(spec.Warnings, func(w string) bool { return strings.Contains(w, "holds the home directory") }) {
		t.Errorf("warnings %q", spec.Warnings)
	}
	if got := find(spec, host.Home+"/.git"); len(got) != 1 || got[0].Kind != plan.MountProtect {
		t.Errorf("~/.git: %+v", got)
	}
}

// TestCommitModeWithoutReadGrant: in commit mode the overlay alone decides the common
// directory, also in a profile that does not grant it read.
func TestCommitModeWithoutReadGrant(t *testing.T) {
	host := testHost(t)
	gitInit(t, host.Cwd)
	spec := mustResolve(t, host, "[filesystem]\nwrite = [\"$CWD\"]\n[git]\nmode = \"commit\"\n")
	if got := find(spec, host.Cwd+"/.git"); len(got) != 1 || got[0].Kind != plan.MountOverlay {
		t.Errorf(".git: %+v", got)
	}
}
