package spawn

/*
#include "placeholders.h"
*/
import "C"

import (
	"encoding/binary"
	"os"
	"unsafe"
)

// PlaceholderRecord is a placeholder as the record file of its directory holds it (struct
// jail_placeholder_record, then the name): an intent made at intentNs (CLOCK_REALTIME), then,
// rewritten in place, made (with its inode and birth time, zero where the filesystem keeps none)
// or void.
type PlaceholderRecord struct {
	Ino       uint64
	BtimeSec  int64
	BtimeNsec uint32
	IntentNs  int64
	State     PlaceholderState
	Dir       bool
	Name      string
}

// PlaceholderState is where a record's placeholder stands.
type PlaceholderState uint8

const (
	PlaceholderIntent PlaceholderState = C.JAIL_PLACEHOLDER_INTENT
	PlaceholderMade   PlaceholderState = C.JAIL_PLACEHOLDER_MADE
	PlaceholderVoid   PlaceholderState = C.JAIL_PLACEHOLDER_VOID
)

// Bytes encodes r, the same length whatever its state.
func (r *PlaceholderRecord) Bytes() []byte {
	b := make([]byte, 0, C.sizeof_struct_jail_placeholder_record+len(r.Name))
	b = binary.NativeEndian.AppendUint64(b, r.Ino)
	b = binary.NativeEndian.AppendUint64(b, uint64(r.BtimeSec))
	b = binary.NativeEndian.AppendUint32(b, r.BtimeNsec)
	b = binary.NativeEndian.AppendUint64(b, uint64(r.IntentNs))
	dir := byte(0)
	if r.Dir {
		dir = 1
	}
	return append(append(b, byte(r.State), dir, byte(len(r.Name))), r.Name...)
}

// The record above is the C struct's layout, packed: 8 + 8 + 4 + 8 + 1 + 1 + 1 bytes.
var (
	_ [C.sizeof_struct_jail_placeholder_record - 31]byte
	_ [31 - C.sizeof_struct_jail_placeholder_record]byte
)

// ReleasePlaceholders ends a hold on placeholders (jail_release_placeholders): files are the state
// directory, then a record file and its directory for each directory, shallowest first. It
// closes them all.
func ReleasePlaceholders(files []*os.File) {
	if len(files) == 0 {
		return
	}
	fds := make([]C.int, len(files))
	for i, f := range files {
		fds[i] = C.int(f.Fd())
	}
	C.jail_release_placeholders((*C.int)(unsafe.Pointer(&fds[0])), C.int(len(fds)))
	for _, f := range files {
		f.Close()
	}
}
