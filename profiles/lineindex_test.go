package profiles

import (
	"testing"

	"github.com/pelletier/go-toml/v2/unstable"
)

// The line index agrees with the parser's own Shape on every node of every built-in profile and
// on edge cases (a node at offset 0, after an empty line, on the last line without a newline).
func TestLineIndexMatchesParser(t *testing.T) {
	docs := map[string][]byte{"edge": []byte("a = 1\n\n\nb = [\n  \"x\",\n\"y\"]\n[t]\nc = { d = \"e\" }")}
	for _, name := range builtinNames() {
		data, err := builtins.ReadFile(name + ".toml")
		if err != nil {
			t.Fatal(err)
		}
		docs[name] = data
	}
	for name, data := range docs {
		var parser unstable.Parser
		parser.Reset(data)
		lines := newLineIndex(data)
		checked := 0
		var check func(n *unstable.Node)
		check = func(n *unstable.Node) {
			if n.Raw.Length > 0 {
				if got, want := lines.line(n.Raw), parser.Shape(n.Raw).Start.Line; got != want {
					t.Errorf("%s: %q at offset %d: line %d, parser says %d", name, n.Data, n.Raw.Offset, got, want)
				}
				checked++
			}
			for it := n.Children(); it.Next(); {
				check(it.Node())
			}
		}
		for parser.NextExpression() {
			check(parser.Expression())
		}
		if err := parser.Error(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if checked == 0 {
			t.Errorf("%s: no node checked", name)
		}
	}
}
