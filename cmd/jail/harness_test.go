package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// TestHarnessInstallAndCheck drives the real agent CLIs, pinned in testdata/harnesses and
// installed by .ci/run (npm ci) into $JAIL_HARNESS_BIN: for each, in a fresh home,
// `jail hook check` fails naming the missing hook, `jail hook install` makes it pass (the
// model's shell command ran in jail: its own pid namespace, the canary hidden, no marker on the
// host), and a hook with a wrong matcher — or, for Codex, one no longer trusted — fails again,
// naming the cause.
func TestHarnessInstallAndCheck(t *testing.T) {
	t.Parallel() // about a minute of agent CLIs starting up, mostly waiting: beside the other tests
	bin := harnessBin(t)
	for _, tc := range []struct {
		harness, settings, matcher string
	}{
		{"claude-code", ".claude/settings.json", `"matcher": "Bash"`},
		{"codex", ".codex/hooks.json", `"matcher": "Bash"`},
		{"gemini", ".gemini/settings.json", `"matcher": "run_shell_command"`},
	} {
		t.Run(tc.harness, func(t *testing.T) {
			t.Parallel()
			home, proj := harnessHome(t)
			if tc.harness == "gemini" {
				// A user who signed in with Google: the check must still reach the fake model.
				testutil.WriteFile(t, filepath.Join(home, ".gemini", "settings.json"), `{"security": {"auth": {"selectedType": "oauth-personal"}}}`+"\n")
			}
			if tc.harness == "codex" {
				// jail is the sandbox here: Codex's own refuses jail's namespaces to root and,
				// with its network off, to anyone (TestHarnessOwnSandbox).
				testutil.WriteFile(t, filepath.Join(home, ".codex", "config.toml"), "sandbox_mode = \"danger-full-access\"\n")
			}
			opts := runOpts{dir: proj, env: []string{"HOME=" + home, "PATH=" + bin + ":" + os.Getenv("PATH"),
				"GEMINI_CLI_TRUST_WORKSPACE=true"}, timeout: hookCheckTimeout}
			check := func(wantOK bool, want string) {
				t.Helper()
				out, errOut, code := runJailWith(t, opts, "hook", "check", "-v", tc.harness)
				if (code == 0) != wantOK || !strings.Contains(out, want) {
					t.Fatalf("jail hook check %s: exit %d, stdout %q; want ok=%v and %q\nstderr: %s", tc.harness, code, out, wantOK, want, errOut)
				}
				t.Logf("check: %s", strings.TrimSpace(out))
			}

			check(false, "hook missing")
			out, errOut, code := runJailWith(t, opts, "hook", "install", tc.harness)
			if code != 0 {
				t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
			}
			settings := filepath.Join(home, tc.settings)
			installed, err := os.ReadFile(settings)
			if err != nil {
				t.Fatal(err)
			}
			check(true, "inside jail")
			if data, err := os.ReadFile(settings); err != nil || string(data) != string(installed) {
				t.Fatalf("check changed %s: %v\nbefore: %s\nafter: %s", settings, err, installed, data)
			}

			if tc.harness == "codex" {
				config := filepath.Join(home, ".codex", "config.toml")
				trusted, err := os.ReadFile(config)
				if err != nil {
					t.Fatal(err)
				}
				testutil.WriteFile(t, config, "sandbox_mode = \"danger-full-access\"\n")
				check(false, "untrusted")
				testutil.WriteFile(t, config, string(trusted))
			}

			if !strings.Contains(string(installed), tc.matcher) {
				t.Fatalf("%s lacks %s:\n%s", settings, tc.matcher, installed)
			}
			testutil.WriteFile(t, settings, strings.Replace(string(installed), tc.matcher, `"matcher": "Read"`, 1))
			check(false, "matcher wrong")
		})
	}
}

// hookCheckTimeout bounds a `jail hook check` run: past check's own bound on the agent CLI (3
// minutes), which a loaded machine's CLI start-up can near, so that a CLI too slow fails there,
// named, and not here as a hang.
const hookCheckTimeout = 4 * time.Minute

// harnessBin is $JAIL_HARNESS_BIN, where .ci/run installs the agent CLIs pinned in
// testdata/harnesses; without it the test is skipped.
func harnessBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("JAIL_HARNESS_BIN")
	if bin == "" {
		t.Skip("JAIL_HARNESS_BIN is not set: the agent CLIs are not installed (.ci/run installs them)")
	}
	return bin
}

// harnessHome makes a fresh home for an agent CLI, with a project directory in it, under the
// real home's .cache: not under /tmp, where Codex will not set up its helpers.
func harnessHome(t *testing.T) (home, proj string) {
	t.Helper()
	realHome, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(realHome, ".cache"), 0o700); err != nil {
		t.Fatal(err)
	}
	home, err = os.MkdirTemp(filepath.Join(realHome, ".cache"), "jail-harness-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	proj = filepath.Join(home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	return home, proj
}
