package workspace

// The line diff behind `jail diff`: Myers' O(ND) algorithm in linear space ("An O(ND) Difference
// Algorithm and Its Variations", 1986, section 4b). It marks the lines of a longest common
// subsequence; every unmarked line is deleted (a) or inserted (b).

// costLimit bounds the edit distance searched for one middle snake. Past it, the problem is
// split in the middle instead: the diff stays correct, only no longer minimal, and a file
// rewritten from end to end cannot take quadratic time.
const costLimit = 4096

// commonLines marks in keepA and keepB the lines of a and b (line IDs) that a longest common
// subsequence keeps.
func commonLines(a, b []int) (keepA, keepB []bool) {
	d := &differ{a: a, b: b, keepA: make([]bool, len(a)), keepB: make([]bool, len(b))}
	d.compare(0, len(a), 0, len(b))
	return d.keepA, d.keepB
}

type differ struct {
	a, b         []int
	keepA, keepB []bool
	vf, vb       []int // furthest-reaching x by diagonal, forward and backward
}

// compare marks the common lines of a[aLo:aHi] and b[bLo:bHi].
func (d *differ) compare(aLo, aHi, bLo, bHi int) {
	for aLo < aHi && bLo < bHi && d.a[aLo] == d.b[bLo] {
		d.keepA[aLo], d.keepB[bLo] = true, true
		aLo, bLo = aLo+1, bLo+1
	}
	for aLo < aHi && bLo < bHi && d.a[aHi-1] == d.b[bHi-1] {
		d.keepA[aHi-1], d.keepB[bHi-1] = true, true
		aHi, bHi = aHi-1, bHi-1
	}
	if aLo == aHi || bLo == bHi {
		return // what is left is only deleted or only inserted
	}
	x0, y0, x1, y1 := d.middleSnake(aLo, aHi, bLo, bHi)
	for x, y := x0, y0; x < x1; x, y = x+1, y+1 {
		d.keepA[x], d.keepB[y] = true, true
	}
	if (x0 == aLo && y0 == bLo && x1 == aHi && y1 == bHi) || (x0 == aHi && y0 == bHi) || (x1 == aLo && y1 == bLo) {
		return // no split that makes progress (cannot happen once prefix and suffix are gone)
	}
	d.compare(aLo, x0, bLo, y0)
	d.compare(x1, aHi, y1, bHi)
}

// middleSnake finds the middle snake of an optimal edit path through a[aLo:aHi] × b[bLo:bHi]:
// the diagonal run (x0,y0)–(x1,y1), in absolute coordinates, where the forward and backward
// searches meet. Past costLimit it answers an empty snake at the middle.
func (d *differ) middleSnake(aLo, aHi, bLo, bHi int) (x0, y0, x1, y1 int) {
	n, m := aHi-aLo, bHi-bLo
	delta := n - m
	odd := delta&1 != 0
	maxD := (n + m + 1) / 2
	off := maxD + abs(delta) + 2
	size := 2*off + 1
	if cap(d.vf) < size {
		d.vf, d.vb = make([]int, size), make([]int, size)
	}
	vf, vb := d.vf[:size], d.vb[:size]
	vf[off+1] = 0
	vb[off+delta+1] = n + 1
	a, b := d.a[aLo:aHi], d.b[bLo:bHi]
	for D := 0; D <= maxD && D <= costLimit; D++ {
		for k := -D; k <= D; k += 2 {
			var x int
			if k == -D || k != D && vf[off+k-1] < vf[off+k+1] {
				x = vf[off+k+1]
			} else {
				x = vf[off+k-1] + 1
			}
			y := x - k
			sx, sy := x, y
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			vf[off+k] = x
			if odd && k >= delta-(D-1) && k <= delta+(D-1) && x >= vb[off+k] {
				return aLo + sx, bLo + sy, aLo + x, bLo + y
			}
		}
		for j := -D; j <= D; j += 2 {
			k := delta + j
			var x int
			if j == -D || j != D && vb[off+k+1]-1 < vb[off+k-1] {
				x = vb[off+k+1] - 1
			} else {
				x = vb[off+k-1]
			}
			y := x - k
			ex, ey := x, y
			for x > 0 && y > 0 && a[x-1] == b[y-1] {
				x, y = x-1, y-1
			}
			vb[off+k] = x
			if !odd && k >= -D && k <= D && x <= vf[off+k] {
				return aLo + x, bLo + y, aLo + ex, bLo + ey
			}
		}
	}
	return aLo + n/2, bLo + m/2, aLo + n/2, bLo + m/2
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
