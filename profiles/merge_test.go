package profiles

import (
	"reflect"
	"strings"
	"testing"
)

// TestEveryKeyMerges sets each key of the schema alone in an overlay and checks that Merge
// carries the value: Merge knows the keys from hand-written lists (origins.go, merge.go), and a
// key missing from them would drop a command-line flag, or an extended profile's value, without
// a word.
func TestEveryKeyMerges(t *testing.T) {
	var walk func(v reflect.Value, path []string)
	walk = func(v reflect.Value, path []string) {
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if name == "" || name == "-" {
				continue
			}
			key := append(path[:len(path):len(path)], name)
			if f.Type.Kind() == reflect.Struct {
				walk(v.Field(i), key)
				continue
			}
			over := &Profile{Source: "overlay"}
			field := reflect.ValueOf(over).Elem().FieldByIndex(fieldIndex(t, key))
			field.Set(sample(t, f.Type))
			name = strings.Join(key, ".")
			merged := reflect.ValueOf(Merge(&Profile{}, over)).Elem().FieldByIndex(fieldIndex(t, key))
			if !reflect.DeepEqual(merged.Interface(), field.Interface()) {
				t.Errorf("%s: Merge gave %v, want %v", name, merged, field)
			}
		}
	}
	walk(reflect.ValueOf(Profile{}), nil)
}

// fieldIndex returns the index path of the field the TOML key names.
func fieldIndex(t *testing.T, key []string) []int {
	t.Helper()
	var index []int
	typ := reflect.TypeFor[Profile]()
	for _, part := range key {
		f, ok := fieldByTag(typ, part)
		if !ok {
			t.Fatalf("no field for %q", strings.Join(key, "."))
		}
		index, typ = append(index, f.Index...), f.Type
	}
	return index
}

// sample returns a set value of type typ.
func sample(t *testing.T, typ reflect.Type) reflect.Value {
	t.Helper()
	v := reflect.New(typ).Elem()
	switch typ.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Slice:
		v.Set(reflect.MakeSlice(typ, 1, 1))
		v.Index(0).Set(sample(t, typ.Elem()))
	case reflect.Uint16, reflect.Uint64:
		v.SetUint(1)
	case reflect.Pointer:
		v.Set(reflect.New(typ.Elem()))
		v.Elem().Set(sample(t, typ.Elem()))
	case reflect.Bool:
		v.SetBool(true)
	default:
		t.Fatalf("no sample for %s", typ)
	}
	return v
}

// A loaded profile merged onto nothing is the same profile (load takes the first profile a file
// extends as it is, without that copy): the same values, each from the same line. The loaded one
// may also keep the line of a value a later profile replaced, which no question asks.
func TestMergeOntoNothingCopies(t *testing.T) {
	for _, name := range builtinNames() {
		p, err := Load(name, testHost(t))
		if err != nil {
			t.Fatal(err)
		}
		merged := Merge(&Profile{}, p)
		for k, o := range merged.origins {
			if got := p.origin(k.key, k.value); got != o {
				t.Errorf("%s: %s %q: from %v, merged onto nothing from %v", name, k.key, k.value, got, o)
			}
		}
		p.origins, merged.origins = nil, nil
		if !reflect.DeepEqual(merged, p) {
			t.Errorf("%s: merged onto nothing:\n got %#v\nwant %#v", name, merged, p)
		}
	}
}
