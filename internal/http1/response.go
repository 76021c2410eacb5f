package http1

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// Response writes one answer: a JSON value, nothing, or a body of unknown length (chunked),
// which streams may flush as they go.
type Response struct {
	bw      *bufio.Writer
	mu      sync.Mutex // streams write from more than one goroutine
	Started bool       // the head is written
	chunked bool
	Close   bool // close the connection after this response
	Failed  bool // a write failed: the client is gone
}

// NewResponse returns a response written to conn, buffered until Finish or a chunk.
func NewResponse(conn io.Writer) *Response { return &Response{bw: bufio.NewWriter(conn)} }

var statusText = map[int]string{
	200: "OK", 201: "Created", 204: "No Content", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
	409: "Conflict", 500: "Internal Server Error", 501: "Not Implemented", 504: "Gateway Timeout",
}

// Head writes the status line and headers; length < 0 means a chunked body, which Write writes.
func (w *Response) Head(status int, contentType string, length int64) {
	w.Started = true
	fmt.Fprintf(w.bw, "HTTP/1.1 %d %s\r\n", status, statusText[status])
	if contentType != "" {
		fmt.Fprintf(w.bw, "Content-Type: %s\r\n", contentType)
	}
	switch {
	case status == 204:
	case length < 0:
		w.chunked = true
		w.bw.WriteString("Transfer-Encoding: chunked\r\n")
	default:
		fmt.Fprintf(w.bw, "Content-Length: %d\r\n", length)
	}
	if w.Close {
		w.bw.WriteString("Connection: close\r\n")
	}
	w.bw.WriteString("\r\n")
}

// JSON answers with v as JSON, or, when v has no JSON form, returns why and writes nothing.
func (w *Response) JSON(status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	w.Head(status, "application/json", int64(len(b)))
	w.bw.Write(b)
	return nil
}

// Write writes p as one chunk of a chunked body, and flushes it: a stream's event reaches the
// client as it is written.
func (w *Response) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	fmt.Fprintf(w.bw, "%x\r\n", len(p))
	w.bw.Write(p)
	w.bw.WriteString("\r\n")
	return len(p), w.flushLocked()
}

func (w *Response) flushLocked() error {
	err := w.bw.Flush()
	if err != nil {
		w.Failed = true
	}
	return err
}

// Finish ends the response: the last chunk of a chunked body, then the flush.
func (w *Response) Finish() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.chunked && !w.Failed {
		w.bw.WriteString("0\r\n\r\n")
	}
	w.flushLocked()
}
