package audit

import (
	"os"
	"strings"
	"testing"
)

// BenchmarkWalk is the host's part of the audit for one grant, AUDIT_BENCH_DIR (a repository):
// the walk, from the cache the previous iteration kept, and the baseline's encoding.
// AUDIT_BENCH_DIR=~/src/repo go test -bench Walk ./jail/internal/audit
func BenchmarkWalk(b *testing.B) {
	dir := os.Getenv("AUDIT_BENCH_DIR")
	if dir == "" {
		b.Skip("AUDIT_BENCH_DIR is not set")
	}
	var sentinels, names int
	for b.Loop() {
		bl := Begin([]string{dir}, os.Getenv("HOME"), os.Getenv("HOME")+"/.config")
		bl.Walk()
		_ = bl.Encode()
		sentinels, names = len(bl.Sentinels), 0
		for _, s := range bl.Sentinels {
			names += strings.Count(s.Names, "\x00")
		}
	}
	b.ReportMetric(float64(sentinels), "sentinels")
	b.ReportMetric(float64(names), "names")
}
