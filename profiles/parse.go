package profiles

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Parse decodes one profile file strictly: an unknown key or a value of the wrong type is an
// *Error naming file, line and key. Only the file's own content is decoded; extends are applied
// by Load, variables by Expand, and values are checked by Resolve. The line of every key and
// every string value is recorded so later errors can point at it.
func Parse(file string, data []byte) (*Profile, error) {
	p := &Profile{Source: file}
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		return nil, decodeError(file, err)
	}
	if err := p.recordOrigins(file, data); err != nil {
		return nil, err
	}
	return p, nil
}

// decodeError turns go-toml's errors into an *Error with file, line and key.
func decodeError(file string, err error) error {
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
func (p *Profile) recordOrigins(file string, data []byte) error {
	var parser unstable.Parser
	parser.Reset(data)
	var table []string
	for parser.NextExpression() {
		expr := parser.Expression()
		switch expr.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keyParts(expr.Key())
		case unstable.KeyValue:
			p.recordKeyValue(&parser, file, table, expr)
		}
	}
	if err := parser.Error(); err != nil {
		return &Error{File: file, Err: fmt.Errorf("parse: %w", err)}
	}
	return nil
}

// recordKeyValue records one key = value expression found under the table prefix.
func (p *Profile) recordKeyValue(parser *unstable.Parser, file string, prefix []string, kv *unstable.Node) {
	keys := kv.Key()
	parts := append([]string(nil), prefix...)
	line := 0
	for keys.Next() {
		n := keys.Node()
		parts = append(parts, string(n.Data))
		line = parser.Shape(n.Raw).Start.Line
	}
	key := strings.Join(parts, ".")
	p.setOrigin(key, "", Origin{File: file, Line: line})
	value := kv.Value()
	switch value.Kind {
	case unstable.String:
		p.setOrigin(key, string(value.Data), Origin{File: file, Line: parser.Shape(value.Raw).Start.Line})
	case unstable.Array:
		for it := value.Children(); it.Next(); {
			if n := it.Node(); n.Kind == unstable.String {
				p.setOrigin(key, string(n.Data), Origin{File: file, Line: parser.Shape(n.Raw).Start.Line})
			}
		}
	case unstable.InlineTable:
		for it := value.Children(); it.Next(); {
			p.recordKeyValue(parser, file, parts, it.Node())
		}
	}
}

// keyParts returns the parts of a dotted key.
func keyParts(it unstable.Iterator) []string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}
