package workspace

import (
	"math/rand/v2"
	"testing"
)

// lcsLength is the textbook dynamic program, the reference commonLines must match.
func lcsLength(a, b []int) int {
	prev := make([]int, len(b)+1)
	for i := range a {
		cur := make([]int, len(b)+1)
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] >= cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev = cur
	}
	return prev[len(b)]
}

// checkCommon checks that the marked lines pair up in order as equal lines, and returns how many.
func checkCommon(t *testing.T, a, b []int, keepA, keepB []bool) int {
	t.Helper()
	var ka, kb []int
	for i, k := range keepA {
		if k {
			ka = append(ka, a[i])
		}
	}
	for j, k := range keepB {
		if k {
			kb = append(kb, b[j])
		}
	}
	if len(ka) != len(kb) {
		t.Fatalf("a keeps %d lines, b %d: %v %v", len(ka), len(kb), a, b)
	}
	for i := range ka {
		if ka[i] != kb[i] {
			t.Fatalf("kept lines differ at %d: %v / %v (a %v, b %v)", i, ka, kb, a, b)
		}
	}
	return len(ka)
}

func randomLines(r *rand.Rand, n, alphabet int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = r.IntN(alphabet)
	}
	return out
}

// TestCommonLinesMinimal: on small random inputs the marks are a longest common subsequence.
func TestCommonLinesMinimal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		a, b := randomLines(r, r.IntN(14), 1+r.IntN(4)), randomLines(r, r.IntN(14), 1+r.IntN(4))
		keepA, keepB := commonLines(a, b)
		if got, want := checkCommon(t, a, b, keepA, keepB), lcsLength(a, b); got != want {
			t.Fatalf("a %v b %v: kept %d lines, the longest common subsequence has %d", a, b, got, want)
		}
	}
}

// TestCommonLinesLarge: past costLimit the split is no longer minimal, but still a common
// subsequence, and quick.
func TestCommonLinesLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a, b := randomLines(r, 30000, 50), randomLines(r, 30000, 50)
	keepA, keepB := commonLines(a, b)
	checkCommon(t, a, b, keepA, keepB)
}
