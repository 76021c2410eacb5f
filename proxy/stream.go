package proxy

import (
	"bytes"
	"errors"
	"io"
	"net"
)

// stream is one side of a forwarded HTTP exchange, the sandbox's connection or an upstream
// one: the socket, and the bytes read from it that are not passed on yet. Heads and chunk-size
// lines are read into buf, whose size is drawn from the sandbox's buffer budget; a body of known
// length goes straight from socket to socket (splice) once buf is drained.
type stream struct {
	conn   *side
	buf    []byte // its length is what is drawn from budget
	r, w   int    // buf[r:w] are read and not passed on yet
	budget *budget
}

// streamBuf is a stream's first buffer: a request or response head nearly always fits.
const streamBuf = 4 << 10

var (
	errHeadTooLarge = errors.New("head too large")
	errLineTooLong  = errors.New("line too long")
)

// newStream makes a stream of conn holding prefix (bytes already read from it); false when the
// budget has no room for its buffer.
func newStream(conn net.Conn, b *budget, prefix []byte) (*stream, bool) {
	if !b.take(streamBuf) {
		return nil, false
	}
	s := &stream{conn: &side{Conn: conn}, buf: make([]byte, streamBuf), budget: b}
	s.w = copy(s.buf, prefix)
	return s, true
}

// release gives the buffer back to the budget; the stream reads nothing more.
func (s *stream) release() {
	s.budget.give(len(s.buf))
	s.buf, s.r, s.w = nil, 0, 0
}

func (s *stream) buffered() []byte { return s.buf[s.r:s.w] }

// fill reads more from the socket, after making room (moving what is buffered to the front,
// else growing buf up to max bytes as the budget allows).
func (s *stream) fill(max int) error {
	if s.w == len(s.buf) {
		switch {
		case s.r > 0:
			s.w = copy(s.buf, s.buf[s.r:s.w])
			s.r = 0
		case len(s.buf) >= max:
			return errHeadTooLarge
		default:
			n := min(2*len(s.buf), max)
			if !s.budget.take(n - len(s.buf)) {
				return errBudget
			}
			s.buf = append(s.buf, make([]byte, n-len(s.buf))...)
		}
	}
	for {
		n, err := s.conn.Read(s.buf[s.w:])
		s.w += n
		if n > 0 || err != nil {
			return err
		}
	}
}

// shrink returns a buffer grown for a large head to the budget once it is empty.
func (s *stream) shrink() {
	if s.r == s.w && len(s.buf) > streamBuf {
		s.budget.give(len(s.buf) - streamBuf)
		s.buf, s.r, s.w = make([]byte, streamBuf), 0, 0
	}
}

// readHead returns the next head, up to and including its empty line, and consumes it. The
// slice is valid until the next read. Empty lines before a request line are skipped, as RFC
// 9112 asks of servers (some clients send CRLF after a body).
func (s *stream) readHead() ([]byte, error) {
	s.shrink()
	searched := 0 // bytes from s.r already searched for the end: each byte is looked at once
	for {
		for searched == 0 && s.r < s.w && (s.buf[s.r] == '\r' || s.buf[s.r] == '\n') {
			s.r++
		}
		if end := headEnd(s.buf[s.r:s.w], searched); end > 0 {
			h := s.buf[s.r : s.r+end]
			s.r += end
			return h, nil
		}
		searched = max(0, s.w-s.r-2) // an end may start in the last bytes
		if err := s.fill(maxHeaderBytes); err != nil {
			return nil, err
		}
	}
}

// headEnd is the length of the head at the start of b (through its empty line), or 0 when b
// holds no complete head; the search starts at from.
func headEnd(b []byte, from int) int {
	for i := from; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return 0
		}
		i += j + 1
		switch {
		case i < len(b) && b[i] == '\n':
			return i + 1
		case i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n':
			return i + 2
		}
	}
}

// lineAt makes sure the line starting off bytes into what is buffered is complete (at most max
// bytes) and returns its length, newline included.
func (s *stream) lineAt(off, max int) (int, error) {
	for searched := 0; ; {
		if i := bytes.IndexByte(s.buf[s.r+off+searched:s.w], '\n'); i >= 0 {
			return searched + i + 1, nil
		}
		if searched = s.w - s.r - off; searched >= max {
			return 0, errLineTooLong
		}
		if err := s.fill(off + max); err != nil {
			return 0, err
		}
	}
}

// copyN passes the next n bytes on to dst: what is buffered with one write, the rest socket to
// socket. act says whether a stall is idle (see activity).
func (s *stream) copyN(dst *side, n int64, act *activity) error {
	if b := s.buffered(); len(b) > 0 {
		k := int(min(int64(len(b)), n))
		if err := act.write(dst, b[:k]); err != nil {
			return err
		}
		s.r += k
		n -= int64(k)
	}
	for n > 0 {
		k, eof, err := act.step(dst, s.conn, min(n, relayChunk))
		n -= k
		switch {
		case err != nil:
			return err
		case eof && n > 0:
			return io.ErrUnexpectedEOF
		}
	}
	return nil
}

// copyChunked passes one chunked body on to dst, chunk-size lines, chunks and trailer fields
// as they are, ending after the empty line that closes it.
func (s *stream) copyChunked(dst *side, act *activity) error {
	crlf := 0 // the line ending the previous chunk's data, checked and not yet passed on
	for {
		n, err := s.lineAt(crlf, maxChunkLine)
		if err != nil {
			return err
		}
		size, err := parseChunkSize(s.buf[s.r+crlf : s.r+crlf+n])
		if err != nil {
			return err
		}
		if size == 0 { // the last chunk: trailer fields up to an empty line
			end := crlf + n
			for {
				l, err := s.lineAt(end, maxHeaderBytes)
				if err != nil {
					return err
				}
				end += l
				if emptyLine(s.buf[s.r+end-l : s.r+end]) {
					return s.copyN(dst, int64(end), act)
				}
				if end > maxHeaderBytes {
					return errHeadTooLarge
				}
			}
		}
		if err := s.copyN(dst, int64(crlf+n)+size, act); err != nil {
			return err
		}
		if crlf, err = s.lineAt(0, 2); err != nil || !emptyLine(s.buf[s.r:s.r+crlf]) {
			return errFraming
		}
	}
}

func emptyLine(b []byte) bool { return string(b) == "\r\n" || string(b) == "\n" }

// maxChunkLine bounds a chunk-size line (its extensions included).
const maxChunkLine = 4 << 10
