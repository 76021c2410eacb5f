package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
)

// The plan travels from host to init in a positional binary form. Both ends are the same binary
// (init is /proc/self/exe), so they share every struct's layout and no field names are needed:
// the fields are written in declaration order. encoding/json cost init 0.3–0.5 ms on every run,
// most of it building its per-type caches from the struct tags.
//
// Strings and byte slices are a length then the bytes; other slices a length then the
// elements; a slice or pointer is written as 0 when nil and otherwise as 1 plus (for slices)
// the length, so nil and empty stay apart; numbers are varints, floats their IEEE bits.

// Marshal encodes *v, a pointer to a struct of plain data.
func Marshal(v any) []byte {
	return appendWire(nil, reflect.ValueOf(v).Elem())
}

func appendWire(b []byte, v reflect.Value) []byte {
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			return append(b, 1)
		}
		return append(b, 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return binary.AppendVarint(b, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return binary.AppendUvarint(b, v.Uint())
	case reflect.Float32, reflect.Float64:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float()))
	case reflect.String:
		b = binary.AppendUvarint(b, uint64(v.Len()))
		return append(b, v.String()...)
	case reflect.Slice:
		if v.IsNil() {
			return append(b, 0)
		}
		b = binary.AppendUvarint(b, uint64(v.Len())+1)
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return append(b, v.Bytes()...)
		}
		for i := range v.Len() {
			b = appendWire(b, v.Index(i))
		}
		return b
	case reflect.Pointer:
		if v.IsNil() {
			return append(b, 0)
		}
		return appendWire(append(b, 1), v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			b = appendWire(b, v.Field(i))
		}
		return b
	}
	panic(fmt.Sprintf("wire: cannot encode %s", v.Type())) // a new field of a kind not handled above
}

// errWireShort is a plan cut short: the host died while sending it.
var errWireShort = errors.New("plan truncated")

// Unmarshal decodes b into *v, which must have the type Marshal was given.
func Unmarshal(b []byte, v any) error {
	d := wireDecoder{b: b}
	d.value(reflect.ValueOf(v).Elem())
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%d bytes after the plan", len(d.b))
	}
	return d.err
}

type wireDecoder struct {
	b   []byte
	err error
}

func (d *wireDecoder) uvarint() uint64 {
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *wireDecoder) bytes(n uint64) []byte {
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

// fail records a short plan and stops the decoding: every read after it yields zero values.
func (d *wireDecoder) fail() {
	if d.err == nil {
		d.err = errWireShort
	}
	d.b = nil
}

func (d *wireDecoder) value(v reflect.Value) {
	switch v.Kind() {
	case reflect.Bool:
		if p := d.bytes(1); p != nil {
			v.SetBool(p[0] == 1)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x, n := binary.Varint(d.b)
		if n <= 0 {
			d.fail()
			return
		}
		d.b = d.b[n:]
		v.SetInt(x)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(d.uvarint())
	case reflect.Float32, reflect.Float64:
		if p := d.bytes(8); p != nil {
			v.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(p)))
		}
	case reflect.String:
		v.SetString(string(d.bytes(d.uvarint())))
	case reflect.Slice:
		n := d.uvarint()
		if n == 0 || d.err != nil {
			return
		}
		n--
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes(d.bytes(n))
			return
		}
		if n > uint64(len(d.b)) { // every element takes at least a byte
			d.fail()
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), int(n), int(n)))
		for i := range int(n) {
			d.value(v.Index(i))
		}
	case reflect.Pointer:
		if p := d.bytes(1); p == nil || p[0] == 0 {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		d.value(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			d.value(v.Field(i))
		}
	default:
		panic(fmt.Sprintf("wire: cannot decode %s", v.Type()))
	}
}
