package jail

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestDoctorChecksEveryCapability(t *testing.T) {
	checks := Doctor()
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
	want := "kernel,user namespaces,landlock,seccomp,overlayfs userns,cgroup v2,container,apparmor userns"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("checks %q, want %q", got, want)
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
