package profiles

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/plan"
	"github.com/jail-sandbox/jail/proxy"
)

func TestEnvironment(t *testing.T) {
	host := testHost(t)
	host.Environ = []string{
		"PATH=/usr/bin", "LC_ALL=C", "LC_TIME=de_DE", "LANG=C.UTF-8", "AWS_SECRET_ACCESS_KEY=s3cr3t",
		"GITHUB_TOKEN=ghp_x", "HOME=/host/home", "TERM=xterm", "PIP_NO_INPUT=0",
	}
	spec := mustResolve(t, host, `[network]
mode = "host" # no offline settings (TestOfflineEnvironment)
[process]
env = ["PATH", "LC_*", "TERM", "HOME", "PIP_NO_INPUT=1", "EMPTY=", "UNSET_ON_HOST"]
`)
	want := []string{"EMPTY=", "HOME=" + host.Home, "LC_ALL=C", "LC_TIME=de_DE", "PATH=/usr/bin", "PIP_NO_INPUT=1", "TERM=xterm"}
	if !slices.Equal(spec.Env, want) {
		t.Errorf("env %q\nwant %q", spec.Env, want)
	}
	spec = mustResolve(t, host, "[network]\nmode = \"host\"\n[process]\nenv = [\"HOME=/elsewhere\"]\n")
	if !slices.Equal(spec.Env, []string{"HOME=/elsewhere"}) {
		t.Errorf("a profile's HOME=VALUE must win: %q", spec.Env)
	}
}

// TestOfflineEnvironment checks that without network the package managers that retry are told
// not to, and that a profile's value or the host's, passed through, wins.
func TestOfflineEnvironment(t *testing.T) {
	host := testHost(t)
	host.Environ = []string{"CARGO_NET_RETRY=5"}
	offline := []string{"CARGO_NET_RETRY=0", "HOME=" + host.Home, "PIP_RETRIES=1", "npm_config_fetch_retries=0"}
	for _, tc := range []struct {
		profile string
		want    []string
	}{
		{"", offline},
		{"[network]\nmode = \"none\"\n", offline},
		{"[network]\nmode = \"host\"\n", []string{"HOME=" + host.Home}},
		{"[process]\nenv = [\"PIP_RETRIES=3\", \"CARGO_NET_RETRY\"]\n",
			[]string{"CARGO_NET_RETRY=5", "HOME=" + host.Home, "PIP_RETRIES=3", "npm_config_fetch_retries=0"}},
	} {
		if env := mustResolve(t, host, tc.profile).Env; !slices.Equal(env, tc.want) {
			t.Errorf("profile %q: env %q, want %q", tc.profile, env, tc.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	spec := mustResolve(t, testHost(t), "")
	want := plan.Spec{
		Hostname:   "jail",
		Namespaces: plan.Namespaces{User: true, Mount: true, PID: true, IPC: true, UTS: true, Net: true, Cgroup: true},
		Network:    plan.Network{Mode: "none"},
		Landlock:   plan.Landlock{Mode: "best-effort"},
		Syscalls:   plan.Syscalls{Default: "allow", Errno: "EPERM"},
	}
	if spec.Hostname != want.Hostname || spec.Namespaces != want.Namespaces || spec.Network.Mode != want.Network.Mode ||
		spec.Landlock.Mode != want.Landlock.Mode || spec.Syscalls.Default != want.Syscalls.Default ||
		spec.Syscalls.Errno != want.Syscalls.Errno || spec.Limits != (plan.Limits{Tmpfs: 1 << 30}) || spec.Fallback != "" || spec.AllowWeaker {
		t.Errorf("defaults: %+v", spec)
	}
}

// TestTmpfsDefault: the private tmpfs mounts get an eighth of the host's RAM unless the profile
// says otherwise, and a bound too small for /dev is refused.
func TestTmpfsDefault(t *testing.T) {
	host := testHost(t)
	host.RAM = 24 << 30
	if got := mustResolve(t, host, "").Limits.Tmpfs; got != 3<<30 {
		t.Errorf("limits.tmpfs on a 24 GiB host: %d, want 3 GiB", got)
	}
	if _, err := resolve(t, host, "[limits]\ntmpfs = 4096\n"); err == nil || !strings.Contains(err.Error(), "limits.tmpfs") {
		t.Errorf("a 4 KiB tmpfs: %v, want an error naming limits.tmpfs", err)
	}
}

func TestSettings(t *testing.T) {
	spec := mustResolve(t, testHost(t), `
[network]
mode = "host"
tcp_connect = [443]
[process]
hostname = "box"
[limits]
timeout = "1m30s"
cpu = 10
processes = 100
core = 1024
tmpfs = 2097152
[syscalls]
deny = ["ptrace"]
allow = ["perf_event_open"]
errno = "ENOSYS"
log = true
[landlock]
mode = "required"
[sandbox]
fallback = "landlock"
allow_weaker = true
`)
	if spec.Network.Mode != "host" || spec.Namespaces.Net || !slices.Equal(spec.Network.TCPConnect, []uint16{443}) {
		t.Errorf("network %+v namespaces %+v", spec.Network, spec.Namespaces)
	}
	if spec.Limits != (plan.Limits{TimeoutSeconds: 90, CPUSeconds: 10, Processes: 100, Core: 1024, Tmpfs: 2 << 20}) {
		t.Errorf("limits %+v", spec.Limits)
	}
	if spec.Hostname != "box" || spec.Landlock.Mode != "required" || spec.Fallback != "landlock" || !spec.AllowWeaker {
		t.Errorf("%+v", spec)
	}
	if s := spec.Syscalls; s.Errno != "ENOSYS" || !s.Log || !slices.Equal(s.Deny, []string{"ptrace"}) || !slices.Equal(s.Allow, []string{"perf_event_open"}) {
		t.Errorf("syscalls %+v", s)
	}
}

func TestLandlockOverride(t *testing.T) {
	host := testHost(t)
	spec := mustResolve(t, host, "[filesystem]\nwrite = [\"$CWD\"]\n[landlock]\nread = [\"/usr/\", \"$HOME\"]\nwrite = [\"/dev\"]\n")
	if !slices.Equal(spec.Landlock.Read, []string{"/usr", host.Home}) || !slices.Equal(spec.Landlock.Write, []string{"/dev"}) {
		t.Errorf("landlock %+v", spec.Landlock)
	}
	if got := find(spec, host.Cwd); len(got) != 1 || got[0].Kind != plan.MountBind {
		t.Errorf("the mounts must not change: %+v", got)
	}
	_, err := resolve(t, host, "[landlock]\nwrite = [\"dev\"]\n")
	wantError(t, err, "test.toml", 2, "landlock.write", "not an absolute path")
}

// TestLandlockTruncate: read grants that read-only binds back, with nothing writable beneath or
// over them, get truncate (the mount refuses it anyway); others do not.
func TestLandlockTruncate(t *testing.T) {
	host := testHost(t)
	mkdir(t, filepath.Join(host.Home, "proj"))
	spec := mustResolve(t, host, "[filesystem]\nread = [\"/usr\", \"$HOME\"]\nwrite = [\"$HOME/proj\"]\n")
	if !slices.Contains(spec.Landlock.Truncate, "/usr") || slices.Contains(spec.Landlock.Truncate, host.Home) {
		t.Errorf("truncate %q, want /usr and not %s (a writable bind beneath)", spec.Landlock.Truncate, host.Home)
	}
	for _, tc := range []struct {
		mounts []plan.Mount
		want   []string
	}{
		{[]plan.Mount{{Kind: plan.MountROBind, Target: "/a"}, {Kind: plan.MountROBind, Target: "/a/b"}}, []string{"/a", "/a/b"}},
		{[]plan.Mount{{Kind: plan.MountROBind, Target: "/a"}, {Kind: plan.MountTmpfs, Target: "/a/b"}}, nil},
		{[]plan.Mount{{Kind: plan.MountROBind, Target: "/a/b"}, {Kind: plan.MountBind, Target: "/a"}}, nil},
		{[]plan.Mount{{Kind: plan.MountBind, Target: "/a"}, {Kind: plan.MountROBind, Target: "/a/b"}}, []string{"/a/b"}},
		{[]plan.Mount{{Kind: plan.MountROBind, Target: "/a"}, {Kind: plan.MountPin, Target: "/a"}}, nil},
	} {
		if got := slices.Sorted(maps.Keys(readOnlyBinds(tc.mounts))); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.mounts, got, tc.want)
		}
	}
}

// TestBuiltins resolves each built-in profile on this host.
func TestBuiltins(t *testing.T) {
	host := testHost(t)
	gitInit(t, host.Cwd)
	for _, name := range builtinNames() {
		t.Run(name, func(t *testing.T) {
			p, err := Load(name, host)
			if err != nil {
				t.Fatal(err)
			}
			if p.Description == "" {
				t.Error("no description")
			}
			spec, err := Resolve(p, host, []string{"true"})
			if err != nil {
				t.Fatal(err)
			}
			if len(spec.Warnings) > 0 {
				t.Errorf("warnings: %q", spec.Warnings)
			}
			if spec.Profile != name {
				t.Errorf("spec.Profile %q", spec.Profile)
			}
			cwd := find(spec, host.Cwd)
			switch name {
			case "agent":
				if len(cwd) != 1 || cwd[0].Kind != plan.MountBind {
					t.Errorf("cwd: %+v", cwd)
				}
				for _, path := range []string{".gitmodules", ".envrc", ".vscode", ".idea", ".jail", ".claude", ".mcp.json", ".codex", ".gemini"} {
					if got := find(spec, host.Cwd+"/"+path); len(got) != 1 || got[0].Kind != plan.MountProtect {
						t.Errorf("%s not protected: %+v", path, got)
					}
				}
				if got := find(spec, host.Cwd+"/.git"); len(got) != 1 || got[0].Kind != plan.MountROBind {
					t.Errorf(".git not read-only: %+v", got)
				}
			case "readonly":
				if len(cwd) != 1 || cwd[0].Kind != plan.MountROBind {
					t.Errorf("cwd: %+v", cwd)
				}
			}
		})
	}
}

// TestProxyLimits: the proxy's limits default to the proxy package's, a profile sets them, an
// extending one or the command line overrides them, and [limits] open_files bounds the
// connections too.
func TestProxyLimits(t *testing.T) {
	host := testHost(t)
	for _, c := range []struct {
		text  string
		conns int
		buf   int64
	}{
		{"[network]\nmode = \"proxy\"\n", proxy.DefaultMaxConnections, proxy.DefaultMaxBuffer},
		{"[network]\nmode = \"proxy\"\nmax_connections = 2000\nmax_buffer = 1048576\n", 2000, 1 << 20},
		{"[network]\nmode = \"proxy\"\nmax_connections = 2000\n[limits]\nopen_files = 100\n", 100, proxy.DefaultMaxBuffer},
		{"[network]\nmode = \"proxy\"\n[limits]\nopen_files = 100000\n", proxy.DefaultMaxConnections, proxy.DefaultMaxBuffer},
	} {
		p := mustResolve(t, host, c.text).Network.Proxy
		if p == nil || p.MaxConnections != c.conns || p.MaxBuffer != c.buf {
			t.Errorf("%q: %+v, want %d connections and %d bytes", c.text, p, c.conns, c.buf)
		}
	}
	base := parse(t, "[network]\nmode = \"proxy\"\nmax_connections = 10\n")
	over := &Profile{Network: NetworkRules{MaxConnections: new(uint64(20))}, Source: "command line"}
	if m := Merge(base, over); *m.Network.MaxConnections != 20 {
		t.Errorf("merged max_connections %d", *m.Network.MaxConnections)
	}
}
