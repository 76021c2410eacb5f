package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/landlock"
)

// reportRun is one jail run with --report and --json-status-fd 3: what it printed, its exit
// status, the report it wrote and the status records, each a decoded JSON line.
type reportRun struct {
	stdout, stderr string
	code           int
	report         *jail.Report
	records        []map[string]any
}

// runJailReport runs jail in a fresh directory with --report and --json-status-fd 3 put before
// args, descriptor 3 opened on a file (by a shell wrapped around jail) that the test reads after.
func runJailReport(t *testing.T, args ...string) reportRun {
	t.Helper()
	return runJailReportUnder(t, nil, args...)
}

// runJailReportUnder is runJailReport with jail run under the wrapper command wrap.
func runJailReportUnder(t *testing.T, wrap []string, args ...string) reportRun {
	t.Helper()
	dir := t.TempDir()
	file, status := filepath.Join(dir, "report.json"), filepath.Join(dir, "status.jsonl")
	r := reportRun{}
	wrap = append(append([]string{}, wrap...), "sh", "-c", `exec "$@" 3>"$0"`, status)
	r.stdout, r.stderr, r.code = runJailWith(t, runOpts{dir: dir, wrap: wrap},
		append([]string{"--report", file, "--json-status-fd", "3"}, args...)...)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("jail %q wrote no report: %s; stderr: %s", args, err, r.stderr)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r.report); err != nil {
		t.Fatalf("report is not a jail.Report: %s\n%s", err, b)
	}
	lines, _ := os.ReadFile(status)
	for _, line := range strings.SplitAfter(string(lines), "\n") {
		if line == "" {
			continue
		}
		if !strings.HasSuffix(line, "\n") {
			t.Errorf("status record not ended by a newline: %q", line)
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("status record %q is not JSON: %s", line, err)
		}
		r.records = append(r.records, rec)
	}
	return r
}

// exitRecord checks that the last status record is the exit record of status code.
func (r reportRun) exitRecord(t *testing.T, code int) {
	t.Helper()
	if len(r.records) == 0 {
		t.Fatalf("no status records")
	}
	last := r.records[len(r.records)-1]
	if len(last) != 1 || last["exit-code"] != float64(code) {
		t.Errorf("exit record %v, want exit-code %d", last, code)
	}
}

func TestReportNormalExit(t *testing.T) {
	// A little CPU work, so the command's time is not all zero.
	r := runJailReport(t, "--", "sh", "-c", `i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; echo out; exit 3`)
	if r.code != 3 || r.stdout != "out\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	rep := r.report
	if rep.Profile.Name != "agent" || rep.Profile.Source != "builtin:agent" {
		t.Errorf("profile %+v", rep.Profile)
	}
	if !slices.Equal(rep.Command, []string{"sh", "-c", `i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; echo out; exit 3`}) {
		t.Errorf("command %q", rep.Command)
	}
	if rep.Exit.Status != 3 || rep.Exit.Code == nil || *rep.Exit.Code != 3 || rep.Exit.Signal != "" {
		t.Errorf("exit %+v", rep.Exit)
	}
	if rep.Error != "" || len(rep.LimitsHit) != 0 || rep.Network != nil {
		t.Errorf("error %q, limits %q, network %+v", rep.Error, rep.LimitsHit, rep.Network)
	}
	if rep.Sandbox != "namespaces" || rep.Layers == nil {
		t.Fatalf("sandbox %q, layers %+v", rep.Sandbox, rep.Layers)
	}
	l := rep.Layers
	for _, ns := range []string{"user", "mount", "pid", "ipc", "uts", "net"} {
		if !slices.Contains(l.Namespaces, ns) {
			t.Errorf("namespaces %q lack %s", l.Namespaces, ns)
		}
	}
	if !l.NoNewPrivs || !l.CapabilitiesDropped {
		t.Errorf("layers %+v", l)
	}
	if abi := landlock.ABI(); abi > 0 || testutil.MustWork() {
		if l.Landlock == nil || l.Landlock.ABI != abi || l.Landlock.Mode != "best-effort" {
			t.Errorf("landlock %+v, kernel ABI %d", l.Landlock, abi)
		}
	}
	if s := l.Seccomp; s == nil || s.Mode != "allow" || s.Errno != "EPERM" || s.DeniedSyscalls < 20 || s.ArgumentChecks == 0 {
		t.Errorf("seccomp %+v", l.Seccomp)
	}
	if u := rep.Usage; u == nil || u.Of != "command" || u.UserSeconds+u.SystemSeconds <= 0 || u.PeakRSSBytes <= 0 {
		t.Errorf("usage %+v", rep.Usage)
	}
	if rep.WallSeconds <= 0 {
		t.Errorf("wall time %v", rep.WallSeconds)
	}

	if len(r.records) != 2 {
		t.Fatalf("status records %v, want a start and an exit record", r.records)
	}
	start := r.records[0]
	child, _ := start["child-pid"].(float64)
	command, _ := start["command-pid"].(float64)
	if child <= 0 || command <= 0 || child == command {
		t.Errorf("start record %v: want init's and the command's host pids", start)
	}
	// The namespaces are the sandbox's, not this test's.
	for _, ns := range []string{"cgroup", "ipc", "mnt", "net", "pid", "uts"} {
		ino, _ := start[ns+"-namespace"].(float64)
		var st syscall.Stat_t
		if err := syscall.Stat("/proc/self/ns/"+ns, &st); err != nil {
			t.Fatal(err)
		}
		if ino == 0 || uint64(ino) == st.Ino {
			t.Errorf("start record %s-namespace %v, this test's is %d", ns, start[ns+"-namespace"], st.Ino)
		}
	}
	r.exitRecord(t, 3)
}

func TestReportSignalDeath(t *testing.T) {
	r := runJailReport(t, "--", "sh", "-c", "kill -TERM $$")
	e := r.report.Exit
	if r.code != 143 || e.Status != 143 || e.Code != nil || e.Signal != "SIGTERM" || e.SignalNumber != 15 {
		t.Errorf("exit %d, report %+v; stderr %q", r.code, e, r.stderr)
	}
	if len(r.report.LimitsHit) != 0 || r.report.Error != "" {
		t.Errorf("limits %q, error %q", r.report.LimitsHit, r.report.Error)
	}
	if len(r.records) != 2 || r.records[0]["child-pid"] == nil {
		t.Errorf("status records %v", r.records)
	}
	r.exitRecord(t, 143)
}

// TestReportCountsWhatTheCommandLeft: the usage reported includes a process the command left
// running, which jail kills at the end: pid 1 measures once it has reaped it (pid1.c).
func TestReportCountsWhatTheCommandLeft(t *testing.T) {
	// The command exits once the loop it leaves has used 0.15 s of CPU (field 14 of its stat:
	// user time, in 100 Hz ticks).
	r := runJailReport(t, "--", "sh", "-c", `sh -c 'while :; do :; done' &
		until [ "$(cut -d' ' -f14 /proc/$!/stat)" -ge 15 ]; do sleep 0.05; done`)
	u := r.report.Usage
	if r.code != 0 || u == nil || u.Of != "command" || u.UserSeconds+u.SystemSeconds < 0.1 {
		t.Errorf("exit %d, usage %+v: want the busy loop's CPU time in it; stderr %q", r.code, u, r.stderr)
	}
}

func TestReportTimeout(t *testing.T) {
	// The command must have started before the timeout, for its record: a start took 50-100 ms
	// at load 25 on two cores, which left 300 ms little room.
	r := runJailReport(t, "--timeout", "2s", "--", "sleep", "60")
	rep := r.report
	if r.code != 124 || rep.Exit.Status != 124 || !slices.Equal(rep.LimitsHit, []string{"timeout"}) ||
		!strings.Contains(rep.Error, "timeout") {
		t.Errorf("exit %d, report %+v", r.code, rep)
	}
	if rep.Exit.Signal != "SIGKILL" || rep.Usage == nil || rep.Usage.Of != "sandbox" {
		t.Errorf("exit %+v, usage %+v", rep.Exit, rep.Usage)
	}
	if len(r.records) != 2 || r.records[0]["child-pid"] == nil {
		t.Errorf("status records %v", r.records)
	}
	r.exitRecord(t, 124)
}

func TestReportRlimitHit(t *testing.T) {
	for _, tc := range []struct {
		limit, script, signal, hit string
	}{
		{"file_size = 4096", "exec head -c 8192 /dev/zero > big", "SIGXFSZ", "file_size"},
		{"cpu = 1", "while :; do :; done", "SIGXCPU", "cpu"},
	} {
		profile := filepath.Join(t.TempDir(), "small.toml")
		if err := os.WriteFile(profile, []byte("extends = [\"agent\"]\n[limits]\n"+tc.limit+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := runJailReport(t, "-p", profile, "--", "sh", "-c", tc.script)
		rep := r.report
		if rep.Exit.Signal != tc.signal || r.code != 128+rep.Exit.SignalNumber || !slices.Equal(rep.LimitsHit, []string{tc.hit}) {
			t.Errorf("%s: exit %d, report exit %+v, limits %q; stderr %q", tc.limit, r.code, rep.Exit, rep.LimitsHit, r.stderr)
		}
		if rep.Profile.Name != profile || rep.Profile.Source != profile {
			t.Errorf("profile %+v", rep.Profile)
		}
	}
}

func TestReportSetupError(t *testing.T) {
	// Inside the sandbox: the command does not exist.
	r := runJailReport(t, "--", "/no/such/command")
	rep := r.report
	if r.code != 127 || rep.Exit.Status != 127 || rep.Exit.Code != nil || !strings.Contains(rep.Error, "/no/such/command") {
		t.Errorf("exit %d, report %+v", r.code, rep)
	}
	if rep.Sandbox != "namespaces" || rep.Layers == nil || rep.Layers.Seccomp != nil || rep.Layers.NoNewPrivs {
		t.Errorf("sandbox %q, layers %+v: the command never started", rep.Sandbox, rep.Layers)
	}
	if len(r.records) != 1 {
		t.Errorf("status records %v, want only the exit record", r.records)
	}
	r.exitRecord(t, 127)

	// Before any sandbox: the profile does not load.
	r = runJailReport(t, "-p", "/no/such/profile.toml", "--", "true")
	rep = r.report
	if r.code != 125 || rep.Exit.Status != 125 || rep.Error == "" || rep.Sandbox != "" || rep.Layers != nil ||
		rep.Profile.Name != "/no/such/profile.toml" || !slices.Equal(rep.Command, []string{"true"}) {
		t.Errorf("exit %d, report %+v", r.code, rep)
	}
	if !strings.Contains(r.stderr, "jail: "+rep.Error) {
		t.Errorf("report error %q is not what jail printed: %q", rep.Error, r.stderr)
	}
	r.exitRecord(t, 125)
}

// A report or status descriptor jail cannot use fails the run before the command runs.
func TestReportUnusable(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	for _, args := range [][]string{
		{"--report", filepath.Join(dir, "missing", "report.json")},
		{"--json-status-fd", "97"},
	} {
		_, errOut, code := runJailIn(t, dir, "", append(args, "--rw", dir, "--", "touch", marker)...)
		if code != 125 || !strings.HasPrefix(errOut, "jail: ") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("%q: the command ran", args)
		}
	}
}

func TestReportProxyDenials(t *testing.T) {
	r := runJailReport(t, "-q", "--allow-host", "example.com", "--", "sh", "-c",
		"curl -sS http://other.test/ >/dev/null; curl -sS http://other.test/ >/dev/null")
	n := r.report.Network
	if n == nil || n.Mode != "proxy" || len(n.Denied) != 1 {
		t.Fatalf("network %+v; stderr %q", n, r.stderr)
	}
	if d := n.Denied[0]; d.Host != "other.test" || d.Port != 80 || d.Count != 2 || !strings.Contains(d.Hint, "--allow-host other.test") {
		t.Errorf("denial %+v", d)
	}
}

func TestReportFallback(t *testing.T) {
	requireNoUserNSSandbox(t)
	r := runJailReportUnder(t, noUserNSPrefix, "--fallback", "landlock", "--allow-weaker", "--", "sh", "-c", "exit 5")
	rep := r.report
	if r.code != 5 || rep.Sandbox != "landlock-fallback" || rep.Layers == nil || len(rep.Layers.Namespaces) != 0 ||
		rep.Layers.Seccomp == nil || !rep.Layers.NoNewPrivs || rep.Exit.Code == nil || *rep.Exit.Code != 5 ||
		rep.Usage == nil || rep.Usage.Of != "command" {
		t.Fatalf("exit %d, report %+v, layers %+v; stderr %q", r.code, rep, rep.Layers, r.stderr)
	}
	if abi := landlock.ABI(); (abi > 0 || testutil.MustWork()) && (rep.Layers.Landlock == nil || rep.Layers.Landlock.ABI != abi) {
		t.Errorf("landlock %+v, kernel ABI %d", rep.Layers.Landlock, abi)
	}
	// The start record names the command itself: there is no init and no namespace of its own.
	if len(r.records) != 2 || len(r.records[0]) != 1 || r.records[0]["child-pid"] == nil {
		t.Errorf("status records %v", r.records)
	}
	r.exitRecord(t, 5)
}

// TestReportCannotBeForged: the command replaces the report's path with its own JSON, or with a
// symlink to a file outside, and exits 7: afterwards the path holds jail's report (exit 7, the
// real command), the file outside is untouched, and jail says the path was tampered with.
func TestReportCannotBeForged(t *testing.T) {
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	testutil.WriteFile(t, victim, "original\n")
	forged := `{"profile":{"name":"agent"},"command":["true"],"exit":{"status":0,"code":0},"wall_seconds":0}`
	for name, script := range map[string]string{
		"rename over": "echo '" + forged + "' > r.new; mv -f r.new report.json; exit 7",
		"symlink":     "ln -sf " + victim + " report.json; exit 7",
	} {
		t.Run(name, func(t *testing.T) {
			r := runJailReport(t, "--", "sh", "-c", script)
			if r.code != 7 || r.report.Exit.Status != 7 || len(r.report.Command) == 0 || r.report.Command[0] != "sh" {
				t.Errorf("exit %d, report %+v: the path does not hold jail's report", r.code, r.report)
			}
			if !strings.Contains(r.stderr, "jail's report replaced it") {
				t.Errorf("jail did not say the report's path was tampered with: %q", r.stderr)
			}
			if got := readFile(t, victim); got != "original\n" {
				t.Errorf("the report was written through the symlink: %q", got)
			}
		})
	}
}

// TestReportDirectoryCannotBeRedirected: the command moves the report's directory away and
// puts a symlink to another directory in its place: the report lands in the directory jail
// opened before the run (now moved), never in the one the symlink names.
func TestReportDirectoryCannotBeRedirected(t *testing.T) {
	dir := t.TempDir()
	out, elsewhere := filepath.Join(dir, "out"), filepath.Join(dir, "elsewhere")
	for _, d := range []string{out, elsewhere} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, errOut, code := runJailIn(t, dir, "", "--report", filepath.Join(out, "report.json"), "--",
		"sh", "-c", "mv out moved && ln -s elsewhere out")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "report.json")); err == nil {
		t.Errorf("the report followed the planted symlink into %s", elsewhere)
	}
	if _, err := os.Stat(filepath.Join(dir, "moved", "report.json")); err != nil {
		t.Errorf("the report is not in the directory jail opened: %v", err)
	}
}
