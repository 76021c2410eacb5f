package http1

import (
	"bufio"
	"context"
	"io"
	"net"
	"time"
)

// A Handler answers r through w. It is called with err set and r nil for a request that could
// not be read, which it answers as an error; the connection closes after that answer.
type Handler func(w *Response, r *Request, err error)

// ServeConn serves the requests that come on conn, one after the other, until the client closes
// it, asks to, or stays idle longer than idle (0: as long as it likes); then it closes conn.
func ServeConn(conn net.Conn, idle time.Duration, h Handler) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	for {
		if idle > 0 {
			conn.SetReadDeadline(time.Now().Add(idle))
		}
		if _, err := br.Peek(1); err != nil {
			return
		}
		conn.SetReadDeadline(time.Time{})
		r, err := ReadRequest(br)
		w := NewResponse(conn)
		if err != nil {
			w.Close = true
			h(w, nil, err)
			w.Finish()
			return
		}
		w.Close = r.Close
		h(w, r, nil)
		w.Finish()
		// What the handler left of the body goes, within reason, so that the next request is
		// read from its start.
		if n, _ := io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20)); n == 1<<20 {
			return
		}
		if w.Close || w.Failed {
			return
		}
	}
}

// Watch returns a context that ends when the client closes the connection, for a request that
// may take long (a stream, a wait): its body must be read by now, and the connection closes
// after w, since the watch reads from it.
func Watch(w *Response, r *Request) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	w.Close = true
	go func() {
		r.br.ReadByte() // the client speaks no more before the answer: EOF once it is gone
		cancel()
	}()
	return ctx
}
