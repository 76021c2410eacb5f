package profiles

import (
	"slices"
	"testing"
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
		got, err := expandPath(tt.in, host.variables(nil))
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
