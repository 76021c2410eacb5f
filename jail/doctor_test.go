package jail

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/jail/internal/container"
)

func TestDoctorChecksEveryCapability(t *testing.T) {
	checks := Doctor(testSpec("true"))
	var names []string
	for _, c := range checks {
		names = append(names, c.Name)
		if c.Status != StatusOK && c.Status != StatusWarn && c.Status != StatusFail {
			t.Errorf("%s: status %q", c.Name, c.Status)
		}
		if c.Status != StatusOK && c.Fix == "" && !strings.HasPrefix(c.Detail, "not probed") {
			t.Errorf("%s is %s without a fix: %q", c.Name, c.Status, c.Detail)
		}
	}
	want := "kernel,container,user namespaces,sandbox,overlay,landlock,seccomp"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("checks %q, want %q", got, want)
	}
}

// TestDoctorLeavesNothing checks that the doctor's probes remove what they make: overlayfs
// leaves its work directory's own subdirectory mode 0, which only root could remove as it was. So
// the ordinary user's run of this test (CI runs both) is the one a probe leaving it would fail.
func TestDoctorLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	Doctor(testSpec("true"))
	left, _ := filepath.Glob(filepath.Join(tmp, "jail-doctor-*"))
	if len(left) > 0 {
		t.Errorf("the doctor left %v", left)
	}
}

// TestDoctorTrialIsARun checks that the doctor's verdict on the sandbox is a real run's: a trial
// whose command fails is a FAIL naming it, and a trial on this host otherwise passes where the
// tests' own sandboxes run.
func TestDoctorTrialIsARun(t *testing.T) {
	ok := checkSandbox(runTrial(testSpec("true")), container.Engine{})
	if ok.Status != StatusOK {
		t.Errorf("a trial of a plan the tests run: %+v", ok)
	}
	bad := checkSandbox(runTrial(testSpec("false")), container.Engine{})
	if bad.Status != StatusFail || !strings.Contains(bad.Detail, "exited 1") {
		t.Errorf("a trial whose command fails: %+v, want FAIL naming its exit status", bad)
	}
}

func TestPrintDoctor(t *testing.T) {
	checks := []Check{
		{Name: "kernel", Status: StatusOK, Detail: "Linux 6.18"},
		{Name: "user namespaces", Status: StatusFail, Detail: "refused", Fix: "sudo sysctl -w x=1"},
	}
	var text bytes.Buffer
	if status := PrintDoctor(&text, checks, false); status != 1 {
		t.Errorf("status %d with a FAIL, want 1", status)
	}
	if want := "OK    kernel            Linux 6.18\nFAIL  user namespaces   refused\n                        fix: sudo sysctl -w x=1\n"; text.String() != want {
		t.Errorf("text\n%s\nwant\n%s", text.String(), want)
	}
	var js bytes.Buffer
	if status := PrintDoctor(&js, checks[:1], true); status != 0 {
		t.Errorf("status %d without a FAIL, want 0", status)
	}
	var back []Check
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back) != 1 || back[0] != checks[0] {
		t.Errorf("JSON round trip: %v %+v", err, back)
	}
}
