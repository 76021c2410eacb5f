package wire

import (
	"os"
	"testing"
)

// TestMade sends each Made and reads it back, and refuses a byte that no Made is.
func TestMade(t *testing.T) {
	for _, want := range []Made{{}, {HostLeaves: true}} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := SendMade(w, want); err != nil {
			t.Fatal(err)
		}
		w.Close()
		got, err := ReceiveMade(r)
		r.Close()
		if err != nil || got != want {
			t.Errorf("sent %+v, received %+v, %v", want, got, err)
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w.Write([]byte{'{'}) // not a Made: the plan read short, say
	w.Close()
	if got, err := ReceiveMade(r); err == nil {
		t.Errorf("received %+v from a byte no Made is", got)
	}
}
