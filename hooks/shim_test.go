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
		argv0, shell, profile string
		ok                    bool
	}{
		{"jail-sh", "sh", "agent", true},
		{"/usr/local/bin/jail-sh", "sh", "agent", true},
		{"./jail-bash", "bash", "agent", true},
		{"/home/u/.local/bin/jail-sh@readonly", "sh", "readonly", true},
		{"jail-bash@agent-net", "bash", "agent-net", true},
		{"jail-sh@", "", "", false},
		{"jail", "", "", false},
		{"/bin/sh", "", "", false},
		{"jail-sh.old", "", "", false},
	} {
		shell, profile, ok := ShimShell(tc.argv0)
		if shell != tc.shell || profile != tc.profile || ok != tc.ok {
			t.Errorf("ShimShell(%q) = %q, %q, %v; want %q, %q, %v", tc.argv0, shell, profile, ok, tc.shell, tc.profile, tc.ok)
		}
	}
}

// The shim takes no profile from its environment: a Makefile's export sets that.
func TestCheckShimEnv(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if err := CheckShimEnv(getenv); err != nil {
		t.Errorf("no JAIL_PROFILE: %v", err)
	}
	env["JAIL_PROFILE"] = "/proj/weak.toml"
	if err := CheckShimEnv(getenv); err == nil || !strings.Contains(err.Error(), "jail-sh@") {
		t.Errorf("JAIL_PROFILE set: %v; want a refusal naming jail-sh@PROFILE", err)
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
