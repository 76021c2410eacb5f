package random

import "testing"

func TestHex(t *testing.T) {
	a, err := Hex(8)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Hex(8)
	if len(a) != 16 || a == b || a == "0000000000000000" {
		t.Errorf("Hex(8): %q, then %q", a, b)
	}
}
