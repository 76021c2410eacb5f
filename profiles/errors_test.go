package profiles

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// TestBadProfiles loads and resolves each bad fixture in testdata/profiles (the CLI's tests use
// them too) and checks the error names file, line and key.
func TestBadProfiles(t *testing.T) {
	tests := []struct {
		file string
		line int
		key  string
		msg  string
	}{
		{"unknown-key.toml", 3, "filesystem.reed", "unknown key (valid in [filesystem]: read, write"},
		{"wrong-type.toml", 3, "filesystem.read", "wrong type: want a list of strings"},
		{"missing-path.toml", 5, "filesystem.read", "missing required path /nonexistent/jail-testdata-missing"},
		{"unknown-var.toml", 3, "filesystem.read", "unknown variable $NOPE"},
		{"bad-network.toml", 3, "network.mode", `"bridge" is not valid (want none or host or proxy)`},
		{"bad-landlock.toml", 3, "landlock.mode", `"strict" is not valid`},
		{"bad-timeout.toml", 3, "limits.timeout", "not a positive duration"},
		{"bad-syscall.toml", 3, "syscalls.deny", `unknown syscall "ptrce" (did you mean "ptrace"?)`},
		{"syntax-error.toml", 3, "", "basic strings cannot have new lines"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			host := testHost(t)
			p, err := Load(fixture(t, tt.file), host)
			if err == nil {
				_, err = Resolve(p, host, []string{"true"})
			}
			if err == nil {
				t.Fatal("no error")
			}
			wantError(t, err, tt.file, tt.line, tt.key, tt.msg)
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans several lines: %q", err)
			}
		})
	}
}

// TestExtendsCycles checks that a profile extending itself, directly or through another, is an
// error naming the chain.
func TestExtendsCycles(t *testing.T) {
	tests := []struct{ file, chain string }{
		{"self-extends.toml", "self-extends.toml → "},
		{"cycle-a.toml", "cycle-a.toml → "},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := Load(fixture(t, tt.file), testHost(t))
			if err == nil || !strings.Contains(err.Error(), "extends cycle:") || !strings.Contains(err.Error(), tt.chain) {
				t.Fatalf("got %v, want an extends cycle through %s", err, tt.chain)
			}
		})
	}
}

// TestErrorLocationAfterMerge checks that an error in an extended file still points at that
// file's line, after merging and expansion.
func TestErrorLocationAfterMerge(t *testing.T) {
	host := testHost(t)
	dir := t.TempDir()
	testutil.WriteFile(t, filepath.Join(dir, "base.toml"), "[filesystem]\nread = [\n  \"/usr\",\n  \"$CWD/missing\",\n]\n")
	testutil.WriteFile(t, filepath.Join(dir, "top.toml"), "extends = [\"base.toml\"]\n[filesystem]\nread = [\"/etc\"]\n")
	p, err := Load(filepath.Join(dir, "top.toml"), host)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Resolve(p, host, nil)
	wantError(t, err, "base.toml", 4, "filesystem.read", "missing required path "+host.Cwd+"/missing")
}

// TestExtendsNotFound checks that a missing extended profile is located at the extends line.
func TestExtendsNotFound(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFile(t, filepath.Join(dir, "top.toml"), "description = \"x\"\nextends = [\"no-such-profile\"]\n")
	_, err := Load(filepath.Join(dir, "top.toml"), testHost(t))
	wantError(t, err, "top.toml", 2, "extends", `profile "no-such-profile" not found`)
}

func TestValidation(t *testing.T) {
	tests := []struct {
		name, text, key, msg string
	}{
		{"errno", "[syscalls]\nerrno = \"EPRM\"\n", "syscalls.errno", "not an errno name"},
		{"default", "[syscalls]\ndefault = \"kill\"\n", "syscalls.default", "want allow or deny"},
		{"allow and deny", "[syscalls]\ndeny = [\"ptrace\"]\nallow = [\"ptrace\"]\n", "syscalls.allow", "both allowed and denied"},
		{"unknown syscall far from any", "[syscalls]\nallow = [\"zzzzzzzzzzzzzzzzzz\"]\n", "syscalls.allow", `unknown syscall "zzzzzzzzzzzzzzzzzz"`},
		{"negative timeout", "[limits]\ntimeout = \"-5s\"\n", "limits.timeout", "not a positive duration"},
		{"fallback", "[sandbox]\nfallback = \"none\"\n", "sandbox.fallback", "want landlock"},
		{"workspace", "[filesystem]\nworkspace = \"cow\"\n", "filesystem.workspace", "want bind or overlay"},
		{"env", "[process]\nenv = [\"BAD NAME=1\"]\n", "process.env", "not NAME"},
		{"env glob", "[process]\nenv = [\"LC_[\"]\n", "process.env", "not NAME"},
		{"env space", "[process]\nenv = [\"BAD NAME\"]\n", "process.env", "not NAME"},
		{"hostname", "[process]\nhostname = \"a b\"\n", "process.hostname", "not a hostname"},
		{"relative path", "[filesystem]\nread = [\"usr\"]\n", "filesystem.read", "not an absolute path"},
		{"unset variable", "[filesystem]\nwrite = [\"$TMPDIR/x\"]\n", "filesystem.write", "unset variable $TMPDIR"},
		{"bad reference", "[filesystem]\nread = [\"/a/$/b\"]\n", "filesystem.read", "bad variable reference"},
		{"no connections", "[network]\nmode = \"proxy\"\nmax_connections = 0\n", "network.max_connections", "0 is not valid (want a positive number up to 2147483647)"},
		{"no buffer", "[network]\nmode = \"proxy\"\nmax_buffer = 0\n", "network.max_buffer", "0 is not valid (want a positive number up to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := resolve(t, testHost(t), tt.text)
			line := strings.Count(tt.text, "\n") // the offending key is on the last line
			wantError(t, err, "test.toml", line, tt.key, tt.msg)
		})
	}
}

func TestParseWrongTypes(t *testing.T) {
	tests := []struct{ text, key, want string }{
		{"[limits]\ncpu = -1\n", "limits.cpu", "want a non-negative integer"},
		{"[network]\ntcp_connect = [70000]\n", "network.tcp_connect", "want a list of port numbers"},
		{"[[filesystem]]\nread = []\n", "filesystem", "want a table"},
		{"[filesystem.read]\n", "filesystem.read", "want a list of strings"},
		{"[syscalls]\nlog = \"yes\"\n", "syscalls.log", "want a boolean"},
	}
	for _, tt := range tests {
		_, err := Parse("test.toml", []byte(tt.text))
		line := 1 + strings.Count(strings.TrimSuffix(tt.text, "\n"), "\n")
		if strings.HasPrefix(tt.text, "[[") || strings.HasPrefix(tt.text, "[filesystem.") {
			line = 1
		}
		wantError(t, err, "test.toml", line, tt.key, "wrong type: "+tt.want)
	}
}

func TestWarnings(t *testing.T) {
	host := testHost(t)
	spec := mustResolve(t, host, "[network]\ntcp_connect = [443]\nmax_buffer = 1024\n[filesystem]\nprotect = [\"/usr/x\"]\n")
	want := []string{
		"test.toml:3: network.max_buffer: has no effect unless network.mode is \"proxy\"",
		"test.toml:2: network.tcp_connect: has no effect unless network.mode is \"host\"",
		"test.toml:5: filesystem.protect: /usr/x is not beneath any writable grant; nothing to protect",
	}
	if strings.Join(spec.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(spec.Warnings, "\n"), strings.Join(want, "\n"))
	}
}

// fixture returns the absolute path of a file in testdata/profiles.
func fixture(t *testing.T, name string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata/profiles", name))
	if err != nil {
		t.Fatal(err)
	}
	return path
}
