package seccomp

import (
	"slices"
	"testing"
)

// coverBlocks must cover every value but the allowed ones, and none of those.
func TestCoverBlocks(t *testing.T) {
	covered := func(blocks []block, v uint32) bool {
		return slices.ContainsFunc(blocks, func(b block) bool { return v&b.mask == b.value })
	}
	blocks := coverBlocks(allowedFamilies, familyBits)
	for v := uint32(0); v < 1<<familyBits; v++ {
		if got, want := covered(blocks, v), !slices.Contains(allowedFamilies, v); got != want {
			t.Errorf("family %d: denied %v, want %v", v, got, want)
		}
	}
	if len(blocks) > 12 {
		t.Errorf("%d blocks for the address families, want a handful", len(blocks))
	}
	blocks = coverBlocks(personalityAllowed, 32)
	for _, v := range personalityAllowed {
		if covered(blocks, v) {
			t.Errorf("allowed persona %#x denied", v)
		}
	}
	for _, v := range []uint32{1, 7, 9, 0x10, 0x0040000, 0x0400000, 0x20009, 0xfffffffe, 0x7fffffff} {
		if !covered(blocks, v) {
			t.Errorf("persona %#x not denied", v)
		}
	}
}
