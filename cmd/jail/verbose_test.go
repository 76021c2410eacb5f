package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// verboseTime is the time since jail started that ends every -v line.
var verboseTime = regexp.MustCompile(`^jail: (.*) \(\+(\d+\.\d\d) ms\)$`)

// TestVerboseTimesEachStep checks every -v line ends with the time since jail started, on one
// clock for the host and init, with init started before jail's runtime (--) and after it: init
// builds nothing before it waits for the plan and the host has sent it, and nothing happens
// after the run ended.
func TestVerboseTimesEachStep(t *testing.T) {
	for _, args := range [][]string{{"-v", "--", "true"}, {"-v", "true"}} {
		began := time.Now()
		_, errOut, code := runJail(t, args...)
		wall := float64(time.Since(began).Microseconds()) / 1e3
		if code != 0 {
			t.Fatalf("jail %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
		}
		at := map[string]float64{}
		for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
			m := verboseTime.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("jail %s: a line without its time: %q", strings.Join(args, " "), line)
				continue
			}
			ms, _ := strconv.ParseFloat(m[2], 64)
			if ms <= 0 || ms > wall {
				t.Errorf("jail %s: %q at %.2f ms, outside the run's %.2f ms", strings.Join(args, " "), m[1], ms, wall)
			}
			at[m[1]] = ms
		}
		ready, sent := at["init: wait for the plan"], at["host: send the plan"]
		built, exec := at["init: build the root filesystem"], at["init: exec /usr/bin/true"]
		if ready == 0 || sent == 0 || built < max(ready, sent) || exec < built {
			t.Errorf("jail %s: init ready at %.2f ms, plan sent at %.2f ms, root built from %.2f ms, command executed at %.2f ms; "+
				"want the root built after the first two and the command after it\n%s", strings.Join(args, " "), ready, sent, built, exec, errOut)
		}
	}
}

// TestVerboseShowsOnlyStepsTaken checks that -v logs the steps a run takes and no other: no
// egress proxy and no --explain watch on a plain run, each where the run asks for it.
func TestVerboseShowsOnlyStepsTaken(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		want     []string
		wantNone []string
	}{
		{[]string{"-v", "--", "true"}, nil, []string{"egress", "proxy", "explain"}},
		{[]string{"-v", "--allow-host", "example.com", "--", "true"},
			[]string{"jail: host: egress proxy on ", "jail: init: serve the egress proxy ports "}, []string{"explain"}},
		{[]string{"-v", "--explain", "--", "true"},
			[]string{"jail: init: watch for --explain "}, []string{"egress", "proxy"}},
	} {
		_, errOut, code := runJail(t, tc.args...)
		if code != 0 {
			t.Fatalf("jail %s: exit %d\n%s", strings.Join(tc.args, " "), code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("jail %s: no line %q in\n%s", strings.Join(tc.args, " "), w, errOut)
			}
		}
		for _, w := range tc.wantNone {
			if strings.Contains(errOut, w) {
				t.Errorf("jail %s: a line mentions %q, a step the run does not take:\n%s", strings.Join(tc.args, " "), w, errOut)
			}
		}
	}
}
