package wire

import (
	"reflect"
	"testing"
)

// fill sets every field reachable from v to a value other than its zero, so that a field the
// codec dropped or mixed up shows in the round trip. n varies the values.
func fill(v reflect.Value, n int) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(-n - 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(n + 200))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(n) + 0.25)
	case reflect.String:
		v.SetString("s" + string(rune('a'+n%26)))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), n+i+1)
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n+1)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), n+i)
		}
	}
}

func TestWireRoundTrip(t *testing.T) {
	in := &Config{}
	fill(reflect.ValueOf(in).Elem(), 0)
	in.Spec.Network.TCPBind = []uint16{} // empty, not nil
	out := &Config{}
	if err := Unmarshal(Marshal(in), out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip changed the plan:\n in  %+v\n out %+v", in.Spec, out.Spec)
	}
	if out.Spec.Network.TCPBind == nil || out.Spec.Landlock.List == nil {
		t.Fatal("an empty slice came back nil")
	}
	var zero Config
	out = &Config{}
	if err := Unmarshal(Marshal(&zero), out); err != nil || !reflect.DeepEqual(&zero, out) {
		t.Fatalf("zero plan: %v, %+v", err, out)
	}
}

// A plan cut short at any byte (the host died while sending it) is an error, never a panic or
// a plan with fields silently zeroed.
func TestWireTruncated(t *testing.T) {
	in := &Config{}
	fill(reflect.ValueOf(in).Elem(), 3)
	b := Marshal(in)
	for n := range len(b) {
		if err := Unmarshal(b[:n], &Config{}); err == nil {
			t.Fatalf("plan cut at %d of %d bytes decoded without error", n, len(b))
		}
	}
	if err := Unmarshal(append(b, 0), &Config{}); err == nil {
		t.Fatal("trailing byte accepted")
	}
}
