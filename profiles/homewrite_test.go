package profiles

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
	"github.com/jail-sandbox/jail/plan"
)

// agentWith resolves the built-in agent with the command line's write grants over it.
func agentWith(t *testing.T, host Host, write ...string) (*plan.Spec, error) {
	t.Helper()
	p, err := Load("agent", host)
	if err != nil {
		t.Fatal(err)
	}
	flags := &Profile{Source: "command line", Filesystem: Filesystem{Write: write}}
	return Resolve(Merge(p, flags), host, []string{"true"})
}

// TestHomeFromCwdRefused: agent's $CWD grant run from the home, or from a directory holding it,
// is refused, located at agent's write line; a project directory beneath the home is not.
func TestHomeFromCwdRefused(t *testing.T) {
	host := testHost(t)
	for _, tc := range []struct{ cwd, want string }{
		{host.Home, "is the home directory"},
		{filepath.Dir(host.Home), "holds the home directory " + host.Home},
		{"/", "holds the home directory " + host.Home},
	} {
		host.Cwd = tc.cwd
		_, err := agentWith(t, host)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "builtin:agent:") ||
			!strings.Contains(err.Error(), "filesystem.write: refusing to grant write to the working directory "+tc.cwd) {
			t.Errorf("from %s: %v, want a refusal that %q", tc.cwd, err, tc.want)
		}
	}
	host.Cwd = filepath.Join(host.Home, "proj")
	testutil.WriteFile(t, filepath.Join(host.Cwd, "f"), "")
	if _, err := agentWith(t, host); err != nil {
		t.Errorf("from a project beneath the home: %v", err)
	}
}

// TestHomeFromCwdThroughALink: the comparison is physical: a working directory reached through
// a symlink to the home is the home.
func TestHomeFromCwdThroughALink(t *testing.T) {
	host := testHost(t)
	link := filepath.Join(t.TempDir(), "home")
	symlink(t, host.Home, link)
	host.Cwd = link
	if _, err := agentWith(t, host); err == nil || !strings.Contains(err.Error(), "is the home directory") {
		t.Errorf("from %s → %s: %v", link, host.Home, err)
	}
}

// TestHomeNamedIsGranted: a home the command line names (--rw ~) is the user's choice, with the
// working directory at the home too; it does not cover a $CWD that holds the home.
func TestHomeNamedIsGranted(t *testing.T) {
	host := testHost(t)
	host.Cwd = host.Home
	spec, err := agentWith(t, host, "~")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(spec.Mounts, func(m plan.Mount) bool { return m.Kind == plan.MountBind && m.Target == host.Home }) {
		t.Errorf("the home is not bound writable: %+v", spec.Mounts)
	}
	host.Cwd = filepath.Dir(host.Home)
	if _, err := agentWith(t, host, "~"); err == nil || !strings.Contains(err.Error(), "holds the home directory") {
		t.Errorf("from the home's parent with --rw ~: %v", err)
	}
}

// TestHomeFromCwdInAnyEntry: a user profile's entry built from $CWD is refused wherever it
// leads to the home; the same directory named another way is granted.
func TestHomeFromCwdInAnyEntry(t *testing.T) {
	host := testHost(t)
	host.Cwd = filepath.Join(host.Home, "proj")
	testutil.WriteFile(t, filepath.Join(host.Cwd, "f"), "")
	if _, err := resolve(t, host, "[filesystem]\nwrite = [\"${CWD}/..\"]\n"); err == nil || !strings.Contains(err.Error(), "test.toml:2: filesystem.write: refusing") {
		t.Errorf("write ${CWD}/..: %v", err)
	}
	host.Cwd = host.Home
	mustResolve(t, host, "[filesystem]\nwrite = [\"$CWD\", \"$HOME\"]\n")
}
