package workspace

import (
	"bufio"
	"fmt"
	"strings"
)

// contextLines is how many unchanged lines surround a change in a hunk, as in diff -u and git.
const contextLines = 3

// splitLines splits text into lines that keep their "\n"; the last may lack it.
func splitLines(text string) []string {
	var lines []string
	for text != "" {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			lines = append(lines, text)
			break
		}
		lines = append(lines, text[:i+1])
		text = text[i+1:]
	}
	return lines
}

// writeHunks writes the unified diff hunks that turn old into new.
func writeHunks(w *bufio.Writer, old, new string) {
	a, b := splitLines(old), splitLines(new)
	ids := map[string]int{}
	id := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			v, ok := ids[l]
			if !ok {
				v = len(ids)
				ids[l] = v
			}
			out[i] = v
		}
		return out
	}
	keepA, keepB := commonLines(id(a), id(b))
	ops := editScript(keepA, keepB)
	for start := 0; start < len(ops); {
		// A hunk runs from contextLines before a change to contextLines after its last change;
		// changes whose contexts would touch share a hunk.
		first := start
		for first < len(ops) && ops[first].kind == ' ' {
			first++
		}
		if first == len(ops) {
			break
		}
		last := first
		for i := first; i < len(ops); i++ {
			if ops[i].kind != ' ' {
				if i-last-1 > 2*contextLines {
					break
				}
				last = i
			}
		}
		lo, hi := max(first-contextLines, start), min(last+contextLines+1, len(ops))
		writeHunk(w, ops[lo:hi], a, b)
		start = hi
	}
}

// edit is one line of an edit script: ' ' kept, '-' deleted from a, '+' inserted from b, with
// the line's index on each side (the side's next line for the other kinds).
type edit struct {
	kind byte
	a, b int
}

// editScript lists the edits that the marked common lines leave.
func editScript(keepA, keepB []bool) []edit {
	var ops []edit
	i, j := 0, 0
	for i < len(keepA) || j < len(keepB) {
		switch {
		case i < len(keepA) && !keepA[i]:
			ops = append(ops, edit{'-', i, j})
			i++
		case j < len(keepB) && !keepB[j]:
			ops = append(ops, edit{'+', i, j})
			j++
		default:
			ops = append(ops, edit{' ', i, j})
			i, j = i+1, j+1
		}
	}
	return ops
}

// writeHunk writes one hunk: its header and lines.
func writeHunk(w *bufio.Writer, ops []edit, a, b []string) {
	countA, countB := 0, 0
	for _, op := range ops {
		if op.kind != '+' {
			countA++
		}
		if op.kind != '-' {
			countB++
		}
	}
	fmt.Fprintf(w, "@@ -%s +%s @@\n", hunkRange(ops[0].a, countA), hunkRange(ops[0].b, countB))
	for _, op := range ops {
		line := ""
		switch op.kind {
		case '-', ' ':
			line = a[op.a]
		case '+':
			line = b[op.b]
		}
		w.WriteByte(op.kind)
		w.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			w.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange is one side of a hunk header: "START,COUNT" with 1-based START, "START" alone for
// one line, and the line before the hunk for an empty side, as diff -u writes them.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}
