package spawn

/*
#include <stdint.h>
#include <stdlib.h>
void jail_format_duration(int64_t ns, char *out, size_t size);
*/
import "C"

import "unsafe"

// formatDuration is fast.c's jail_format_duration, for its test against time.Duration.String.
func formatDuration(ns int64) string {
	buf := (*C.char)(C.malloc(64))
	defer C.free(unsafe.Pointer(buf))
	C.jail_format_duration(C.int64_t(ns), buf, 64)
	return C.GoString(buf)
}
