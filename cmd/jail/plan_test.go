package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// mountLine is -v's line for one mount op: "jail: KIND OBJECT (+T ms)".
var mountLine = regexp.MustCompile(`^jail: (ro-bind|bind|protect|tmpfs|hide-dir|hide-file|proc|dev|symlink|dir) (.*) \(\+[\d.]+ ms\)$`)

// TestPlanHoldsEveryMount: the mounts a run makes are the plan's, in its order, none added on the
// way, with the egress proxy too (its socket reaches init with the plan, not by a mount).
func TestPlanHoldsEveryMount(t *testing.T) {
	for _, args := range [][]string{nil, {"--allow-host", "example.com"}} {
		dir := t.TempDir()
		out, errOut, code := runJailIn(t, dir, "", append(args, "--dry-run", "--", "true")...)
		var spec struct {
			Mounts []struct{ Kind, Target string }
		}
		if err := json.Unmarshal([]byte(out), &spec); code != 0 || err != nil {
			t.Fatalf("jail %q --dry-run: exit %d, %v\n%s", args, code, err, errOut)
		}
		var planned []string
		for _, m := range spec.Mounts {
			planned = append(planned, m.Kind+" "+m.Target)
		}
		_, errOut, code = runJailIn(t, dir, "", append(append([]string{"-v"}, args...), "--", "true")...)
		var made []string
		for _, line := range strings.Split(errOut, "\n") {
			if m := mountLine.FindStringSubmatch(line); m != nil {
				object := m[2]
				if _, target, ok := strings.Cut(object, " on "); ok { // binds: SOURCE on TARGET
					object = target
				} else if link, _, ok := strings.Cut(object, " -> "); ok {
					object = link
				}
				made = append(made, m[1]+" "+object)
			}
		}
		if code != 0 || strings.Join(made, "\n") != strings.Join(planned, "\n") {
			t.Errorf("jail %q: exit %d; mounts made:\n%s\nplanned:\n%s", args, code, strings.Join(made, "\n"), strings.Join(planned, "\n"))
		}
	}
}
