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
}

// coverOtherBits must cover every value with a bit outside the flags but the one with every bit
// set, and nothing else: every value of a narrower width for several flags, and personality's at
// width 32 on every value with at most two bits set or clear and a sample of the rest.
func TestCoverOtherBits(t *testing.T) {
	covered := func(blocks []block, v uint32) bool {
		return slices.ContainsFunc(blocks, func(b block) bool { return v&b.mask == b.value })
	}
	denied := func(flags, v, ones uint32) bool { return v&^flags != 0 && v != ones }
	for _, flags := range []uint32{0, 1, 0x8, 0x801, 0x8 | 0x400, 0x3ff} {
		const width = 12
		blocks := coverOtherBits(flags, width)
		for v := uint32(0); v < 1<<width; v++ {
			if got, want := covered(blocks, v), denied(flags, v, 1<<width-1); got != want {
				t.Fatalf("flags %#x, value %#x: denied %v, want %v", flags, v, got, want)
			}
		}
	}
	blocks := coverOtherBits(personalityFlags, 32)
	if len(blocks) != 32 {
		t.Errorf("%d blocks for personality, want 32", len(blocks))
	}
	check := func(v uint32) {
		if got, want := covered(blocks, v), denied(personalityFlags, v, perQuery); got != want {
			t.Fatalf("persona %#x: denied %v, want %v", v, got, want)
		}
	}
	for i := range 32 {
		for j := range 32 {
			for _, v := range []uint32{1<<i | 1<<j, 1 << i, 0} {
				check(v)
				check(^v)
			}
		}
	}
	for v := uint64(0); v < 1<<32; v += 65521 {
		check(uint32(v))
	}
	for _, v := range []uint32{perLinux, perLinux32, uname26, uname26 | perLinux32, perQuery} {
		if covered(blocks, v) {
			t.Errorf("allowed persona %#x denied", v)
		}
	}
}
