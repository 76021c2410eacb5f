package explain

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/plan"
)

// explainSpec is a plan like agent's for a project at /home/u/proj.
func explainSpec() *plan.Spec {
	return &plan.Spec{
		Profile: "agent",
		Mounts: []plan.Mount{
			{Kind: plan.MountROBind, Source: "/usr", Target: "/usr", IsDir: true},
			{Kind: plan.MountROBind, Source: "/etc", Target: "/etc", IsDir: true},
			{Kind: plan.MountTmpfs, Target: "/tmp", IsDir: true},
			{Kind: plan.MountTmpfs, Target: "/home/u", IsDir: true},
			{Kind: plan.MountSymlink, Source: "usr/bin", Target: "/bin"},
			{Kind: plan.MountProc, Target: "/proc"},
			{Kind: plan.MountDev, Target: "/dev"},
			{Kind: plan.MountBind, Source: "/home/u/proj", Target: "/home/u/proj", IsDir: true},
			{Kind: plan.MountROBind, Source: "/home/u/.gitconfig", Target: "/home/u/.gitconfig"},
			{Kind: plan.MountHideFile, Target: "/etc/shadow"},
			{Kind: plan.MountBind, Source: "/home/u/proj/.git", Target: "/home/u/proj/.git", IsDir: true},
			{Kind: plan.MountProtect, Source: "/home/u/proj/.vscode", Target: "/home/u/proj/.vscode", IsDir: true},
			{Kind: plan.MountProtect, Source: "/home/u/proj/.git/hooks", Target: "/home/u/proj/.git/hooks", IsDir: true},
		},
		Network:  plan.Network{Mode: "none"},
		Landlock: plan.Landlock{Mode: "best-effort", Write: []string{"/tmp", "/home/u", "/dev", "/home/u/proj"}},
	}
}

func TestWriteVerdict(t *testing.T) {
	spec := explainSpec()
	cases := []struct {
		t           writeTarget
		rule, under string
	}{
		{writeTarget{path: "/home/u/proj/main.go", exists: true}, "", ""},
		{writeTarget{path: "/home/u/proj/new/file", dirMissing: true}, "", ""}, // ENOENT on the host too
		{writeTarget{path: "/home/u/.bashrc"}, "", ""},                         // the throwaway home
		{writeTarget{path: "/tmp/x"}, "", ""},
		{writeTarget{path: "/dev/null", exists: true}, "", ""},
		{writeTarget{path: "/proc/1/fd/1", exists: true}, "", ""},
		{writeTarget{path: "/etc/passwd", exists: true}, "read-only", "/etc"},
		{writeTarget{path: "/usr/lib/x.pyc"}, "read-only", "/usr"},
		{writeTarget{path: "/srv/data/x", dirMissing: true}, "outside-grants", ""},
		{writeTarget{path: "/x"}, "outside-grants", ""},
		{writeTarget{path: "/home/u/.gitconfig", exists: true, removes: true}, "read-only", "/home/u/.gitconfig"},
		{writeTarget{path: "/home/u/.gitconfig.lock"}, "", ""},
		{writeTarget{path: "/etc/shadow", exists: true}, "hidden", "/etc/shadow"},
		{writeTarget{path: "/home/u/proj/.vscode/settings.json"}, "protected", "/home/u/proj/.vscode"},
		{writeTarget{path: "/home/u/proj/.vscode", exists: true, removes: true}, "protected", "/home/u/proj/.vscode"},
		{writeTarget{path: "/home/u/proj/.vscodex"}, "", ""},
		{writeTarget{path: "/home/u/proj/.git/hooks/pre-commit"}, "protected", "/home/u/proj/.git/hooks"},
		{writeTarget{path: "/home/u/proj/.git/index", exists: true}, "", ""},
		{writeTarget{path: "/home/u/proj/.git", exists: true, removes: true}, "mountpoint", "/home/u/proj/.git"},
		{writeTarget{path: "/home/u/proj", exists: true, removes: true}, "mountpoint", "/home/u/proj"},
		{writeTarget{path: "/tmp/outside/victim", dirMissing: true}, "not-in-sandbox", "/tmp"},
	}
	for _, c := range cases {
		rule, under := writeVerdict(spec, c.t)
		if rule != c.rule || under != c.under {
			t.Errorf("%+v: %q %q, want %q %q", c.t, rule, under, c.rule, c.under)
		}
	}
	// Landlock's own write list decides too, where the mounts would allow it.
	spec.Landlock.Write = []string{"/tmp"}
	if rule, _ := writeVerdict(spec, writeTarget{path: "/home/u/proj/main.go"}); rule != "outside-grants" {
		t.Errorf("write outside Landlock's grants: %q, want outside-grants", rule)
	}
	spec.Landlock.Mode = "off"
	if rule, _ := writeVerdict(spec, writeTarget{path: "/home/u/proj/main.go"}); rule != "" {
		t.Errorf("write with Landlock off: %q, want none", rule)
	}
}

func TestConnectVerdict(t *testing.T) {
	spec := explainSpec()
	ext, lo := netip.MustParseAddr("1.2.3.4"), netip.MustParseAddr("127.0.0.1")
	never := func() bool { t.Error("socket type asked for needlessly"); return true }
	check := func(what string, addr netip.Addr, port uint16, tcp func() bool, want string) {
		t.Helper()
		if got := connectVerdict(spec, addr, port, tcp); got != want {
			t.Errorf("%s: %q, want %q", what, got, want)
		}
	}
	check("none, external", ext, 443, never, "no-network")
	check("none, loopback", lo, 8080, never, "")
	check("none, ::1", netip.IPv6Loopback(), 80, never, "")
	spec.Network = plan.Network{Mode: "proxy", Proxy: &plan.Proxy{HTTPPort: 3128}}
	check("proxy, external", ext, 443, never, "proxy-only")
	check("proxy, its port", lo, 3128, never, "")
	spec.Network = plan.Network{Mode: "host"}
	check("host", ext, 443, never, "")
	spec.Network = plan.Network{Mode: "host", TCPConnect: []uint16{443}}
	check("host, granted port", ext, 443, never, "")
	check("host, other port over TCP", lo, 5432, func() bool { return true }, "tcp-port")
	check("host, other port over UDP", ext, 53, func() bool { return false }, "")
}

func TestDenialMessages(t *testing.T) {
	spec := explainSpec()
	cases := []struct {
		d    Denial
		want string
	}{
		{Denial{Kind: "write", Path: "/etc/passwd", Rule: "read-only", Under: "/etc", Exists: true},
			"denied write /etc/passwd — profile agent grants writes only under /home/u/proj (and in the throwaway /tmp, /home/u); to allow: --rw /etc/passwd"},
		{Denial{Kind: "write", Path: "/etc/new", Rule: "read-only", Under: "/etc"},
			"to allow: --rw /etc"},
		{Denial{Kind: "write", Path: "/home/u/proj/.vscode/a", Rule: "protected", Under: "/home/u/proj/.vscode"},
			"profile agent protects /home/u/proj/.vscode"},
		{Denial{Kind: "write", Path: "/etc/shadow", Rule: "hidden", Under: "/etc/shadow", Exists: true},
			"profile agent hides /etc/shadow"},
		{Denial{Kind: "write", Path: "/tmp/out/v", Rule: "not-in-sandbox", Under: "/tmp"},
			"denied write /tmp/out/v — /tmp/out is not in the sandbox: profile agent puts an empty throwaway tmpfs at /tmp; to allow: --rw /tmp/out"},
		{Denial{Kind: "connect", Address: "1.2.3.4:443", Rule: "no-network"},
			"denied connect 1.2.3.4:443 — profile agent has no network; to allow: --allow-host HOST or --net host"},
	}
	for _, c := range cases {
		if got := c.d.Explain(spec); !strings.Contains(got, c.want) {
			t.Errorf("%+v:\n got %q\nwant %q", c.d, got, c.want)
		}
	}
}

// TestDenialMessageShowsPathSafely: a path the command chose reaches the caller's terminal with
// its control characters escaped, on one line.
func TestDenialMessageShowsPathSafely(t *testing.T) {
	d := Denial{Kind: "write", Path: "/etc/x\x1b]0;pwned\x07\njail: fake", Rule: "read-only", Under: "/etc"}
	got := d.Explain(explainSpec())
	if strings.ContainsAny(got, "\x1b\x07\n") || !strings.Contains(got, `"/etc/x\x1b]0;pwned\a\njail: fake"`) {
		t.Errorf("path not escaped: %q", got)
	}
	d = Denial{Kind: "write", Path: "/etc/my file", Rule: "read-only", Under: "/etc", Exists: true}
	if got := d.Explain(explainSpec()); !strings.Contains(got, `--rw "/etc/my file"`) {
		t.Errorf("path with a space not quoted: %q", got)
	}
}
