package main

import (
	"cmp"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// Real tools must work inside the default profile.

func TestPythonAndPipelines(t *testing.T) {
	out, errOut, code := runJail(t, "--", "sh", "-c",
		`python3 -c 'import json, threading; print(json.dumps({"ok": 1}))' | tr a-z A-Z | grep -c OK`)
	if code != 0 || strings.TrimSpace(out) != "1" {
		t.Fatalf("exit %d, out %q, err %q", code, out, errOut)
	}
}

func TestGitWorkflow(t *testing.T) {
	proj := t.TempDir()
	script := `set -e
git init -q
git config user.email a@b.c && git config user.name agent 2>/dev/null || true
echo hello > a.txt
git add a.txt
git -c user.email=a@b.c -c user.name=agent commit -qm first
git status --porcelain
git log --oneline | wc -l`
	out, errOut, code := runJailIn(t, proj, "", "--", "sh", "-c", script)
	// `git config` writes .git/config, which the agent profile protects once .git exists; the
	// commit itself must work.
	if code != 0 || !strings.HasSuffix(out, "1\n") {
		t.Fatalf("exit %d, out %q, err %q", code, out, errOut)
	}
}

func TestGoBuild(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain on PATH")
	}
	goroot, err := exec.Command(goBin, "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	proj := t.TempDir()
	testutil.WriteFile(t, filepath.Join(proj, "go.mod"), "module example.com/hello\n\ngo 1.21\n")
	testutil.WriteFile(t, filepath.Join(proj, "main.go"), `package main

import (
	"fmt"
	"sync"
)

func main() {
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() { defer wg.Done() }()
	}
	wg.Wait()
	fmt.Println("built and ran")
}
`)
	args := []string{"--ro", strings.TrimSpace(string(goroot)),
		"--env", "PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin",
		"--env", "GOCACHE=" + filepath.Join(proj, ".cache/go-build"),
		"--env", "GOTOOLCHAIN=local", "--env", "GOFLAGS=-mod=mod", "--env", "CGO_ENABLED=0",
		"--", "sh", "-c", "go build -o hello . && ./hello"}
	out, errOut, code := runJailIn(t, proj, "", args...)
	if code != 0 || out != "built and ran\n" {
		t.Fatalf("exit %d, out %q, err %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(proj, "hello")); err != nil {
		t.Fatalf("binary not on the host: %s", err)
	}
}

// TestNoNetworkToolsDoNotRetry checks that without network the package managers that retry a
// registry they cannot reach (npm for a minute, cargo for seconds) give up at the first failure,
// which they report. Each tool is tried when it is on PATH.
func TestNoNetworkToolsDoNotRetry(t *testing.T) {
	proj := t.TempDir()
	testutil.WriteFile(t, filepath.Join(proj, "Cargo.toml"), "[package]\nname = \"x\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nitoa = \"1\"\n")
	testutil.WriteFile(t, filepath.Join(proj, "src/main.rs"), "fn main() {}\n")
	home, _ := os.UserHomeDir()
	rustup := cmp.Or(os.Getenv("RUSTUP_HOME"), filepath.Join(home, ".rustup"))
	tried := 0
	for _, tc := range []struct {
		tool    string
		args    []string // jail's, before the tool's own install is granted
		cmd     []string
		failure string // the first failure, reported
		retry   string // a retry
	}{
		{"npm", nil, []string{"npm", "view", "left-pad", "--loglevel=http"}, "left-pad attempt 1 failed", "attempt 2"},
		// rustup's cargo, with its toolchains; its registry cache in the sandbox's /tmp.
		{"cargo", []string{"--ro", rustup + "?", "--env", "RUSTUP_HOME=" + rustup, "--env", "CARGO_HOME=/tmp/cargo"},
			[]string{"cargo", "fetch"}, "Could not resolve host", "spurious network error"},
	} {
		path, err := exec.LookPath(tc.tool)
		if err != nil {
			continue
		}
		tried++
		args := append(tc.args, "--ro", filepath.Dir(path), "--env", "PATH="+filepath.Dir(path)+":/usr/bin:/bin", "--")
		_, errOut, code := runJailIn(t, proj, "", append(args, tc.cmd...)...)
		if code == 0 || !strings.Contains(errOut, tc.failure) || strings.Contains(errOut, tc.retry) {
			t.Errorf("%s: exit %d; want a failure reporting %q and no %q:\n%s", tc.tool, code, tc.failure, tc.retry, errOut)
		}
	}
	if tried == 0 {
		t.Skip("neither npm nor cargo on PATH")
	}
}
