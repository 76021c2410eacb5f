// Package suggest finds the "did you mean" for a mistyped name: the closest of the valid ones by
// edit distance, when it is close enough to be a plausible typo.
package suggest

// Closest returns the candidate nearest to name, within maxDist edits (insertions, deletions,
// substitutions, and swaps of two neighbours: the usual typos), or "" when none is that close.
// Of equally near candidates the first wins.
func Closest(name string, candidates []string, maxDist int) string {
	best, bestDist := "", maxDist+1
	for _, c := range candidates {
		if d := distance(name, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// distance is the optimal string alignment distance between a and b: Levenshtein's, with a swap
// of two neighbouring bytes counted as one edit.
func distance(a, b string) int {
	// d[i][j] is the distance between a[:i] and b[:j]; three rows are enough.
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
