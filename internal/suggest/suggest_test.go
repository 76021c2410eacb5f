package suggest

import "testing"

func TestClosest(t *testing.T) {
	candidates := []string{"allow-host", "allow-private", "allow-weaker", "json", "npm", "ro", "rw"}
	for _, c := range []struct {
		name    string
		maxDist int
		want    string
	}{
		{"allow-hots", 1, "allow-host"}, // a swap of neighbours is one edit
		{"nmp", 1, "npm"},
		{"allow-privat", 2, "allow-private"},
		{"jsn", 1, "json"},
		{"rx", 1, "ro"}, // equally near: the first
		{"allow", 2, ""},
		{"x", 0, ""},
		{"json", 0, "json"},
	} {
		if got := Closest(c.name, candidates, c.maxDist); got != c.want {
			t.Errorf("Closest(%q, %d) = %q, want %q", c.name, c.maxDist, got, c.want)
		}
	}
}
