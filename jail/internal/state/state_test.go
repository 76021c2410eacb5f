package state

import "testing"

// TestMapUID: the state directory's uid is the user's outside a user namespace: root of
// `unshare -U -r` run by uid 1001 is 1001, not the host's root.
func TestMapUID(t *testing.T) {
	for _, c := range []struct {
		uidMap   string
		uid, out int
	}{
		{"         0          0 4294967295\n", 1001, 1001},
		{"         0       1001          1\n", 0, 1001},
		{"         0     100000      65536\n", 1000, 101000},
		{"         0       1001          1\n         1     100000      65535\n", 5, 100004},
		{"", 7, 7},
		{"         0       1001          1\n", 3, 3}, // unmapped: itself
	} {
		if got := mapUID(c.uidMap, c.uid); got != c.out {
			t.Errorf("mapUID(%q, %d) = %d, want %d", c.uidMap, c.uid, got, c.out)
		}
	}
}
