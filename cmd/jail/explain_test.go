package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// --explain: each write or connect the sandbox refuses gets one line after the command, naming
// what was refused and the flag that would allow it; allowed calls get none; the command's exit
// status is its own; without the flag nothing is watched.

// explainLines are the lines jail printed about denials.
func explainLines(stderr string) []string {
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "jail: denied ") {
			lines = append(lines, l)
		}
	}
	return lines
}

// explainOne runs script with --explain and args in dir and checks that jail printed exactly
// one denial line, containing every one of want, and that the script's exit status 3 came
// through.
func explainOne(t *testing.T, dir string, args []string, script string, want ...string) {
	t.Helper()
	args = append(append([]string{"--explain"}, args...), "--", "sh", "-c", script+"; exit 3")
	_, stderr, code := runJailIn(t, dir, "", args...)
	if code != 3 {
		t.Errorf("%q: exit status %d, want the command's 3; stderr: %s", script, code, stderr)
	}
	lines := explainLines(stderr)
	if len(lines) != 1 {
		t.Fatalf("%q: want one denial line, got %d; stderr:\n%s", script, len(lines), stderr)
	}
	for _, w := range want {
		if !strings.Contains(lines[0], w) {
			t.Errorf("%q: the line does not say %q:\n%s", script, w, lines[0])
		}
	}
}

func TestExplainWriteDenials(t *testing.T) {
	proj, outside := project(t)
	// An editor settings directory of the user's own: protected read-only as it is (a missing one
	// gets a socket placeholder, which nothing can cd into).
	if err := os.Mkdir(filepath.Join(proj, ".vscode"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, script string
		want         []string
	}{
		{"read-only system file", "echo x > /etc/jail-explain-test",
			[]string{"denied write /etc/jail-explain-test — profile agent grants writes only under " + proj, "to allow: --rw /etc"}},
		{"existing read-only file, twice", "echo x >> /etc/hostname; echo y >> /etc/hostname",
			[]string{"denied write /etc/hostname", "to allow: --rw /etc/hostname"}},
		{"directory outside the grants", "mkdir /usr/jail-explain-test",
			[]string{"denied write /usr/jail-explain-test", "to allow: --rw /usr"}},
		{"host directory the sandbox's /tmp hides", "echo pwned > " + outside + "/victim",
			[]string{"denied write " + outside + "/victim", "is not in the sandbox", "to allow: --rw " + outside}},
		{"git hook", "echo pwned > .git/hooks/pre-commit",
			[]string{"denied write " + proj + "/.git/hooks/pre-commit", "keeps the repository's git directory " + proj + "/.git read-only", "agent-commit"}},
		{"editor settings through a relative path and a symlink", "ln -s .vscode v && cd v && echo '{}' > settings.json",
			[]string{"denied write " + proj + "/.vscode/settings.json", "protects " + proj + "/.vscode"}},
		{"moving a protected directory aside", "mv .vscode vscode.old",
			[]string{"denied write " + proj + "/.vscode", "protects"}},
		{"hidden file", "echo x > /etc/shadow",
			[]string{"denied write /etc/shadow", "hides /etc/shadow"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { explainOne(t, proj, nil, c.script, c.want...) })
	}
	if got := readFile(t, filepath.Join(outside, "victim")); got != "original\n" {
		t.Errorf("the host file changed: %q", got)
	}
}

func TestExplainAllowedWritesSilent(t *testing.T) {
	proj, _ := project(t)
	script := `set -e; echo ok > file; mkdir -p d/e; mv file d/e/f; rm -r d; echo x > /dev/null; echo y 2>/dev/null >&2
echo z > ~/.bashrc; echo t > /tmp/t; chmod 600 /tmp/t; ln -s /tmp/t link; git status >/dev/null; exit 3`
	_, stderr, code := runJailIn(t, proj, "", "--explain", "--", "sh", "-c", script)
	if code != 3 {
		t.Fatalf("exit status %d, want the command's 3; stderr: %s", code, stderr)
	}
	if len(explainLines(stderr)) > 0 { // the writes to ~ and /tmp are named as gone with the sandbox
		t.Errorf("allowed writes explained as denials:\n%s", stderr)
	}
}

func TestExplainConnect(t *testing.T) {
	// 192.0.2.1 is TEST-NET-1: no route in the sandbox's own network namespace.
	explainOne(t, t.TempDir(), nil, connectScript("/dev/tcp/192.0.2.1/443"),
		"denied connect 192.0.2.1:443 — profile agent has no network; to allow: --allow-host HOST or --net host")
	// The sandbox's own loopback is its own business.
	_, stderr, _ := runJail(t, "--explain", "--", "sh", "-c", connectScript("/dev/tcp/127.0.0.1/9"))
	if lines := explainLines(stderr); len(lines) > 0 {
		t.Errorf("a connect to the sandbox's loopback explained as a denial: %q", lines)
	}
}

// TestExplainOptIn: without --explain no watching filter is installed (one seccomp filter, not
// two) and nothing is explained.
func TestExplainOptIn(t *testing.T) {
	script := "grep Seccomp_filters /proc/self/status; echo x > /etc/jail-explain-test; exit 3"
	for _, c := range []struct {
		args    []string
		filters string
		lines   int
	}{
		{nil, "Seccomp_filters:\t1", 0},
		{[]string{"--explain"}, "Seccomp_filters:\t2", 1},
	} {
		stdout, stderr, code := runJail(t, append(c.args, "--", "sh", "-c", script)...)
		if code != 3 {
			t.Errorf("%q: exit status %d, want 3; stderr: %s", c.args, code, stderr)
		}
		if !strings.Contains(stdout, c.filters) {
			t.Errorf("%q: want %q, got %q", c.args, c.filters, stdout)
		}
		if n := len(explainLines(stderr)); n != c.lines {
			t.Errorf("%q: %d denial lines, want %d; stderr:\n%s", c.args, n, c.lines, stderr)
		}
	}
}

func TestExplainReport(t *testing.T) {
	r := runJailReport(t, "--explain", "--", "sh", "-c", "echo x > /etc/jail-explain-test; echo y > /etc/jail-explain-test")
	if len(r.report.Denials) != 1 {
		t.Fatalf("want one denial in the report, got %+v", r.report.Denials)
	}
	d := r.report.Denials[0]
	if d.Kind != "write" || d.Path != "/etc/jail-explain-test" || d.Rule != "read-only" ||
		!slices.Contains(explainLines(r.stderr), "jail: "+d.Message) {
		t.Errorf("report denial %+v does not match what jail printed:\n%s", d, r.stderr)
	}
	if r := runJailReport(t, "--", "true"); r.report.Denials != nil {
		t.Errorf("denials reported without --explain: %+v", r.report.Denials)
	}
}

func TestExplainConnectProxyAndPorts(t *testing.T) {
	explainOne(t, t.TempDir(), []string{"--allow-host", "example.com"}, connectScript("/dev/tcp/192.0.2.1/80"),
		"denied connect 192.0.2.1:80 — profile agent reaches the network only through jail's proxy")

	requireLandlock(t, 4)
	dir := t.TempDir()
	profile := filepath.Join(dir, "ports.toml")
	testutil.WriteFile(t, profile, "extends = [\"agent\"]\n[network]\nmode = \"host\"\ntcp_connect = [443]\n")
	// The UDP connect is not refused: Landlock's rules are TCP's.
	explainOne(t, dir, []string{"-p", profile}, connectScript("/dev/tcp/127.0.0.1/9")+"; "+connectScript("/dev/udp/127.0.0.1/9"),
		"denied connect 127.0.0.1:9 — profile "+profile+" allows TCP connections only to ports 443")
}

// TestWritesThatVanishAreListed checks that --explain and -v name, after the command, what it
// wrote outside the working directory to the sandbox's private tmpfs mounts (the sandbox's /tmp,
// where this project's parent is, and the home), which is gone with the sandbox; that writes to
// the project are not named; and that a plain run says nothing.
func TestWritesThatVanishAreListed(t *testing.T) {
	proj := t.TempDir()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	script := "touch ../gone-x kept && mkdir -p ~/.cache/tool && echo abc > ~/.cache/tool/a && echo d > ~/.cache/tool/b"
	want := "gone with the sandbox, written to its private tmpfs mounts and not to the host: " +
		filepath.Join(filepath.Dir(proj), "gone-x") + " (0 B), " + filepath.Join(home, ".cache") + " (2 files, 6 B)"
	for _, tc := range []struct {
		flag, want string
	}{
		{"--explain", "jail: " + want + "\n"},
		{"-v", "jail: " + want + " (+"},
		{"-q", ""},
	} {
		_, errOut, code := runJailIn(t, proj, "", tc.flag, "--", "sh", "-c", script)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", tc.flag, code, errOut)
		}
		if tc.want == "" && strings.Contains(errOut, "gone with the sandbox") || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: stderr does not have %q:\n%s", tc.flag, tc.want, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(proj), "gone-x")); err == nil {
		t.Error("../gone-x is on the host")
	}
	if _, err := os.Stat(filepath.Join(proj, "kept")); err != nil {
		t.Errorf("the project's own file: %s", err)
	}
}
