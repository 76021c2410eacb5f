package audit

import (
	"fmt"
	"io"
	"os"
	"strconv"
)

// Main is jail executed by its waiter as spawn.AuditArg0 (spawn/audit.c), when a sentinel of the
// baseline on descriptor 3 changed: it prints what the run wrote unseen on stderr and returns the
// status args[1] carries, the run's, to exit with.
func Main(args []string) int {
	status := 125
	if len(args) > 1 {
		status, _ = strconv.Atoi(args[1])
	}
	f := os.NewFile(3, "audit baseline")
	_, err := f.Seek(0, io.SeekStart) // the host wrote it: its offset is at the end
	var data []byte
	if err == nil {
		data, err = io.ReadAll(f)
	}
	f.Close()
	b, derr := Decode(data)
	if err != nil || derr != nil {
		fmt.Fprintf(os.Stderr, "jail: audit: the baseline could not be read: %v %v\n", err, derr)
		return status
	}
	dir, _ := os.Getwd()
	for _, line := range Lines(b.Findings(), b.Partial, dir) {
		fmt.Fprintf(os.Stderr, "jail: %s\n", line)
	}
	return status
}
