package profiles

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// schemaField finds the struct field a TOML key path names, walking Profile's toml tags.
func schemaField(key []string) (reflect.StructField, bool) {
	t := reflect.TypeFor[Profile]()
	var field reflect.StructField
	for _, part := range key {
		if t.Kind() != reflect.Struct {
			return field, false
		}
		f, ok := fieldByTag(t, part)
		if !ok {
			return field, false
		}
		field, t = f, f.Type
	}
	return field, len(key) > 0
}

// fieldByTag returns t's field whose toml tag names key.
func fieldByTag(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("toml"), ","); name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// schemaType describes in words the type the schema wants at key, "" when key is unknown.
func schemaType(key []string) string {
	f, ok := schemaField(key)
	if !ok {
		return ""
	}
	switch t := f.Type; {
	case t.Kind() == reflect.Struct:
		return "a table"
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Bool:
		return "a boolean"
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Uint64:
		return "a non-negative integer"
	case t == reflect.TypeFor[[]string]():
		return "a list of strings"
	case t == reflect.TypeFor[[]uint16]():
		return "a list of port numbers (0-65535)"
	}
	return "" // unreachable while every schema field is handled above
}

// unknownKey explains an unknown key and lists the keys valid in its table.
func unknownKey(key []string) error {
	t := reflect.TypeFor[Profile]()
	where := "at the top level"
	if len(key) > 1 {
		f, ok := schemaField(key[:len(key)-1])
		if !ok || f.Type.Kind() != reflect.Struct {
			return errors.New("unknown key")
		}
		t, where = f.Type, "in ["+strings.Join(key[:len(key)-1], ".")+"]"
	}
	var valid []string
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ","); name != "" && name != "-" {
			valid = append(valid, name)
		}
	}
	return fmt.Errorf("unknown key (valid %s: %s)", where, strings.Join(valid, ", "))
}

// schemaErrors finds every key of doc (a table at key prefix, decoded without a schema) that t,
// the struct it decodes into, does not have, and every value of the wrong type, and deletes them
// from doc. Each is located at its key's line.
func (p *Profile) schemaErrors(doc map[string]any, prefix []string, t reflect.Type) ErrorList {
	var errs ErrorList
	for name, v := range doc {
		key := append(slices.Clone(prefix), name)
		field, ok := fieldByTag(t, name)
		var err error
		switch {
		case !ok || name == "-":
			err = unknownKey(key)
		case field.Type.Kind() == reflect.Struct:
			if table, isTable := v.(map[string]any); isTable {
				errs = append(errs, p.schemaErrors(table, key, field.Type)...)
				continue
			}
			err = errors.New("wrong type: want " + schemaType(key))
		case !fits(field.Type, v):
			err = errors.New("wrong type: want " + schemaType(key))
		default:
			continue
		}
		o := p.origin(strings.Join(key, "."), "")
		errs = append(errs, &Error{File: o.File, Line: o.Line, Key: strings.Join(key, "."), Err: err})
		delete(doc, name)
	}
	return errs
}

// fits reports whether v, a value decoded without a schema, decodes into a field of type t (any
// kind but a table).
func fits(t reflect.Type, v any) bool {
	switch {
	case t.Kind() == reflect.String:
		_, ok := v.(string)
		return ok
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Bool:
		_, ok := v.(bool)
		return ok
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Uint64:
		n, ok := v.(int64)
		return ok && n >= 0
	case t == reflect.TypeFor[[]string]():
		return allOf(v, func(e any) bool { _, ok := e.(string); return ok })
	case t == reflect.TypeFor[[]uint16]():
		return allOf(v, func(e any) bool { n, ok := e.(int64); return ok && n >= 0 && n <= 65535 })
	}
	return false
}

// allOf reports whether v is an array whose every element passes ok.
func allOf(v any, ok func(any) bool) bool {
	list, isList := v.([]any)
	return isList && !slices.ContainsFunc(list, func(e any) bool { return !ok(e) })
}
