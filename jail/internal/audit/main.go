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
	b, err := Read(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "jail: audit: the baseline could not be read: %v\n", err)
		return status
	}
	dir, _ := os.Getwd()
	for _, line := range Lines(b.Findings(), b.Partial, dir) {
		fmt.Fprintf(os.Stderr, "jail: %s\n", line)
	}
	return status
}

// Read decodes the baseline Encode wrote to f, from its start whatever f's offset: the writer
// leaves it at the end.
func Read(f *os.File) (*Baseline, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	return Decode(data)
}
