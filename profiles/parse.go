package profiles

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Parse decodes one profile file strictly: an unknown key or a value of the wrong type is an
// *Error naming file, line and key (an ErrorList when there are several). Only the file's own
// content is decoded; extends are applied by Load, variables by Expand, and values are checked by
// Resolve. The line of every key and every string value is recorded so later errors can point
// at it.
func Parse(file string, data []byte) (*Profile, error) {
	p, errs := parseAll(file, data)
	if err := errs.err(); err != nil {
		return nil, err
	}
	return p, nil
}

// parseAll is Parse, finding every problem: when the strict decoder refuses the document, which it
// does at its first wrong type, every unknown key and value of the wrong type is looked for
// (schemaErrors), and the profile decoded from the rest is returned with them, so that what
// follows can check the rest too. The profile is nil when nothing could be decoded.
// A built-in profile is not decoded: its result was generated from the same text at build time
// (builtins_parsed.go).
func parseAll(file string, data []byte) (*Profile, ErrorList) {
	if p := parsedBuiltin(file, data); p != nil {
		return p, nil
	}
	return decode(file, data)
}

// decode is parseAll with the TOML decoded, for any file.
func decode(file string, data []byte) (*Profile, ErrorList) {
	p := &Profile{Source: file}
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	strictErr := dec.Decode(p)
	if strictErr == nil {
		if err := p.recordOrigins(file, data); err != nil {
			return nil, ErrorList{err}
		}
		return p, nil
	}
	var doc map[string]any
	if toml.Unmarshal(data, &doc) != nil { // not TOML at all: the decoder's syntax error
		return nil, ErrorList{decodeError(file, strictErr)}
	}
	located := &Profile{Source: file}
	if err := located.recordOrigins(file, data); err != nil {
		return nil, ErrorList{err}
	}
	errs := located.schemaErrors(doc, nil, reflect.TypeFor[Profile]())
	if len(errs) == 0 {
		return nil, ErrorList{decodeError(file, strictErr)}
	}
	// The rest of the document, without the keys found wrong, decodes.
	rest := &Profile{Source: file, origins: located.origins}
	text, err := toml.Marshal(doc)
	if err != nil || toml.NewDecoder(bytes.NewReader(text)).DisallowUnknownFields().Decode(rest) != nil {
		return nil, errs
	}
	return rest, errs
}

// decodeError turns go-toml's errors into an *Error with file, line and key.
func decodeError(file string, err error) *Error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		de := &strict.Errors[0]
		line, _ := de.Position()
		key := []string(de.Key())
		return &Error{File: file, Line: line, Key: strings.Join(key, "."), Err: unknownKey(key)}
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, _ := de.Position()
		key := []string(de.Key())
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if want := schemaType(key); want != "" && strings.Contains(msg, "cannot") {
			msg = "wrong type: want " + want
		}
		return &Error{File: file, Line: line, Key: strings.Join(key, "."), Err: errors.New(msg)}
	}
	return &Error{File: file, Err: err}
}

// recordOrigins walks the document's syntax tree (it already decoded, so it is well formed) and
// records the line of every key and of every string value.
func (p *Profile) recordOrigins(file string, data []byte) *Error {
	var parser unstable.Parser
	parser.Reset(data)
	lines := newLineIndex(data)
	var table []string
	for parser.NextExpression() {
		expr := parser.Expression()
		switch expr.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keyParts(expr.Key())
			if it := expr.Key(); it.Next() { // the header's line, for an error about the table itself
				p.setOrigin(strings.Join(table, "."), "", Origin{File: file, Line: lines.line(it.Node().Raw)})
			}
		case unstable.KeyValue:
			p.recordKeyValue(lines, file, table, expr)
		}
	}
	if err := parser.Error(); err != nil {
		return &Error{File: file, Err: fmt.Errorf("parse: %w", err)}
	}
	return nil
}

// recordKeyValue records one key = value expression found under the table prefix.
func (p *Profile) recordKeyValue(lines lineIndex, file string, prefix []string, kv *unstable.Node) {
	keys := kv.Key()
	parts := append([]string(nil), prefix...)
	line := 0
	for keys.Next() {
		n := keys.Node()
		parts = append(parts, string(n.Data))
		line = lines.line(n.Raw)
	}
	key := strings.Join(parts, ".")
	p.setOrigin(key, "", Origin{File: file, Line: line})
	value := kv.Value()
	switch value.Kind {
	case unstable.String:
		p.setOrigin(key, string(value.Data), Origin{File: file, Line: lines.line(value.Raw)})
	case unstable.Array:
		for it := value.Children(); it.Next(); {
			if n := it.Node(); n.Kind == unstable.String {
				p.setOrigin(key, string(n.Data), Origin{File: file, Line: lines.line(n.Raw)})
			}
		}
	case unstable.InlineTable:
		for it := value.Children(); it.Next(); {
			p.recordKeyValue(lines, file, parts, it.Node())
		}
	}
}

// lineIndex holds the offset at which each line of a document starts. It turns a node's offset
// into its line with a binary search: the parser's Shape counts the newlines from the start of
// the document for every node, which made recording the origins of a long, commented built-in
// profile the larger part of loading it.
type lineIndex []int

func newLineIndex(data []byte) lineIndex {
	starts := lineIndex{0}
	for i, b := range data {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// line is the 1-based line that r starts on.
func (l lineIndex) line(r unstable.Range) int {
	n, found := slices.BinarySearch(l, int(r.Offset))
	if found {
		return n + 1
	}
	return n
}

// keyParts returns the parts of a dotted key.
func keyParts(it unstable.Iterator) []string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}
