package hooks

import (
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/hooks/hookstest"
)

func TestShimShell(t *testing.T) {
	for _, tc := range []struct {
		argv0, shell string
		ok           bool
	}{
		{"jail-sh", "sh", true},
		{"/usr/local/bin/jail-sh", "sh", true},
		{"./jail-bash", "bash", true},
		{"jail", "", false},
		{"/bin/sh", "", false},
		{"jail-sh.old", "", false},
	} {
		shell, ok := ShimShell(tc.argv0)
		if shell != tc.shell || ok != tc.ok {
			t.Errorf("ShimShell(%q) = %q, %v; want %q, %v", tc.argv0, shell, ok, tc.shell, tc.ok)
		}
	}
}

func TestShimProfile(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got := ShimProfile(getenv); got != "agent" {
		t.Errorf("default profile %q; want agent", got)
	}
	env["JAIL_PROFILE"] = "readonly"
	if got := ShimProfile(getenv); got != "readonly" {
		t.Errorf("profile %q; want readonly", got)
	}
}

var shellArgsCases = []struct {
	args []string
	want []string // nil: the -c usage error
}{
	{[]string{"-c", "echo hi"}, []string{"-p", "agent", "--", "sh", "-c", "echo hi"}},
	{[]string{"-c", "echo $0 $1", "name", "one"}, []string{"-p", "agent", "--", "sh", "-c", "echo $0 $1", "name", "one"}},
	{[]string{"-ec", "false; echo no"}, []string{"-p", "agent", "--", "sh", "-ec", "false; echo no"}},
	{[]string{"-e", "-o", "pipefail", "-c", "x"}, []string{"-p", "agent", "--", "sh", "-e", "-o", "pipefail", "-c", "x"}},
	{[]string{"-c", "--", "x"}, []string{"-p", "agent", "--", "sh", "-c", "--", "x"}},
	{[]string{"-c", "-x"}, nil}, // -x is an option here too: sh and bash both refuse it
	{[]string{"script.sh", "a"}, []string{"-p", "agent", "--", "sh", "script.sh", "a"}},
	{[]string{}, []string{"-p", "agent", "--", "sh"}},
	{[]string{"-i"}, []string{"-p", "agent", "--", "sh", "-i"}},
	{[]string{"-c"}, nil},
	{[]string{"-xc"}, nil},
	{[]string{"-c", "-o", "errexit"}, nil},
	{[]string{"-c", "--"}, nil},
}

func TestShellArgs(t *testing.T) {
	for _, tc := range shellArgsCases {
		got, err := ShellArgs(tc.args, "agent")
		if tc.want == nil {
			if !errors.Is(err, errNoCommandString) {
				t.Errorf("ShellArgs(%q) = %q, %v; want the -c usage error", tc.args, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ShellArgs(%q) = %q, %v; want %q", tc.args, got, err, tc.want)
		}
	}
}

// TestShellArgsAgreeWithShells: the usage error is reported exactly when sh and bash themselves
// refuse the arguments for a missing -c command string.
func TestShellArgsAgreeWithShells(t *testing.T) {
	for _, shell := range []string{"sh", "bash"} {
		for _, tc := range shellArgsCases {
			out, _ := exec.Command(shell, tc.args...).CombinedOutput() // stdin: /dev/null
			refused := strings.Contains(string(out), "-c requires an argument") ||
				strings.Contains(string(out), "-c: option requires an argument")
			if refused != (tc.want == nil) {
				t.Errorf("%s %q: shell refused=%v, ShellArgs refuses=%v (%q)", shell, tc.args, refused, tc.want == nil, out)
			}
		}
	}
}

// TestShellArgsRunLikeSh runs jail's argv through the stand-in jail and checks the inner shell
// sees exactly what a caller of /bin/sh passed: the command string, $0 and the arguments.
func TestShellArgsRunLikeSh(t *testing.T) {
	jail, err := hookstest.FakeJailIn(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	shimArgs := []string{"-c", `printf '[%s]' "$0" "$@"; echo`, "name", "a b", "it's", "漢\n"}
	for _, shell := range []string{"sh", "bash"} {
		args, err := ShellArgsFor(shell, shimArgs, "agent")
		if err != nil {
			t.Fatal(err)
		}
		log := filepath.Join(t.TempDir(), "argv")
		cmd := exec.Command(jail, args...)
		cmd.Env = []string{"FAKE_JAIL_LOG=" + log, "PATH=/usr/bin:/bin"}
		got, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		want, err := exec.Command(shell, shimArgs...).Output()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) || string(got) != "[name][a b][it's][漢\n]\n" {
			t.Errorf("%s: shim printed %q, the shell itself %q", shell, got, want)
		}
		argv, err := hookstest.ReadArgv(log)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(argv, args) {
			t.Errorf("jail argv %q; want %q", argv, args)
		}
	}
}
