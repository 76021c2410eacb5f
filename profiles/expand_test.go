package profiles

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/plan"
)

func TestExpandVariables(t *testing.T) {
	host := testHost(t)
	host.TmpDir = "/var/tmp/x"
	tests := []struct{ in, want string }{
		{"~", host.Home},
		{"~/.gitconfig?", host.Home + "/.gitconfig?"},
		{"$HOME/a", host.Home + "/a"},
		{"${CWD}/b", host.Cwd + "/b"},
		{"$TMPDIR", "/var/tmp/x"},
		{"/a/~", "/a/~"}, // only a leading ~ is the home
		{"$CWD$HOME", host.Cwd + host.Home},
	}
	for _, tt := range tests {
		got, err := expandPath(tt.in, host.variables())
		if err != nil || got != tt.want {
			t.Errorf("expandPath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestExpandDropsOptionalWithUnsetVariable(t *testing.T) {
	host := testHost(t) // TMPDIR unset; not a worktree, so GIT_DIR and GIT_COMMON_DIR unset
	p := parse(t, "[filesystem]\nwrite = [\"$TMPDIR?\", \"$CWD\", \"$GIT_COMMON_DIR?\"]\nprotect = [\"$GIT_DIR/config.worktree?\"]\n")
	e, err := Expand(p, host)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(e.Filesystem.Write, []string{host.Cwd}) || len(e.Filesystem.Protect) != 0 {
		t.Errorf("got write %q protect %q, want only $CWD", e.Filesystem.Write, e.Filesystem.Protect)
	}
	if o := e.origin("filesystem.write", host.Cwd); o.Line != 2 {
		t.Errorf("expanded value lost its line: %+v", o)
	}
}

func TestExpandDeduplicates(t *testing.T) {
	host := testHost(t)
	p := parse(t, "[filesystem]\nread = [\"~/x\", \"$HOME/x\"]\n")
	e, err := Expand(p, host)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(e.Filesystem.Read, []string{host.Home + "/x"}) {
		t.Errorf("got %q", e.Filesystem.Read)
	}
}

// TestWorktreeVariables checks $GIT_DIR and $GIT_COMMON_DIR for a linked worktree, and that
// the agent profile protects hooks and config where the worktree's gitdir points.
func TestWorktreeVariables(t *testing.T) {
	host := testHost(t)
	repo := t.TempDir()
	mkdir(t, filepath.Join(repo, ".git/worktrees/wt"))
	mkdir(t, filepath.Join(repo, ".git/hooks"))
	writeFile(t, filepath.Join(repo, ".git/config"), "")
	writeFile(t, filepath.Join(repo, ".git/worktrees/wt/commondir"), "../..\n")
	writeFile(t, filepath.Join(host.Cwd, ".git"), "gitdir: "+repo+"/.git/worktrees/wt\n")

	vars := host.variables()
	if vars["GIT_DIR"] != repo+"/.git/worktrees/wt" || vars["GIT_COMMON_DIR"] != repo+"/.git" {
		t.Fatalf("GIT_DIR %q GIT_COMMON_DIR %q", vars["GIT_DIR"], vars["GIT_COMMON_DIR"])
	}
	p, err := Load("agent", host)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := Resolve(p, host, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []plan.Mount{
		{Kind: plan.MountBind, Source: repo + "/.git", Target: repo + "/.git", IsDir: true},
		{Kind: plan.MountProtect, Source: repo + "/.git/hooks", Target: repo + "/.git/hooks", IsDir: true},
		{Kind: plan.MountProtect, Source: repo + "/.git/config", Target: repo + "/.git/config"},
		{Kind: plan.MountProtect, Source: repo + "/.git/worktrees/wt/config.worktree", Target: repo + "/.git/worktrees/wt/config.worktree", Create: true},
		{Kind: plan.MountBind, Source: repo + "/.git/worktrees", Target: repo + "/.git/worktrees", IsDir: true},
		{Kind: plan.MountProtect, Source: host.Cwd + "/.git", Target: host.Cwd + "/.git"},
	} {
		if !slices.Contains(spec.Mounts, want) {
			t.Errorf("no mount %+v in %+v", want, spec.Mounts)
		}
	}
	for _, m := range spec.Mounts {
		if strings.HasPrefix(m.Target, host.Cwd+"/.git/") {
			t.Errorf("mount beneath the .git file: %+v", m)
		}
	}
}
