package api

import (
	"errors"
	"fmt"
	"strings"
)

// Error codes, each with its HTTP status (docs/api.md, "Errors").
const (
	InvalidArgument    = "invalid_argument"
	PermissionDenied   = "permission_denied"
	NotFound           = "not_found"
	AlreadyExists      = "already_exists"
	FailedPrecondition = "failed_precondition"
	DeadlineExceeded   = "deadline_exceeded"
	Unimplemented      = "unimplemented"
	Internal           = "internal"
)

// Error is a failure as the API reports it: a code and jail's one-line message ("jail: …").
// Exit is the status the command line exits with for it (125 unless the error is a command's
// 126 or 127); it does not travel.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Exit    int    `json:"-"`
}

func (e *Error) Error() string { return e.Message }

// ErrorBody is an error answer's body.
type ErrorBody struct {
	Error *Error `json:"error"`
}

// Errorf makes an Error with code; the message gets jail's prefix.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: "jail: " + fmt.Sprintf(format, args...)}
}

// AsError returns err as an *Error: itself, one it wraps, or an internal one with its text.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "jail: ") {
		msg = "jail: " + msg
	}
	return &Error{Code: Internal, Message: msg}
}

// Status is the HTTP status of an error code. (Numbers, not net/http's names: jail's binary
// leaves net/http out, whose set-up would cost every run's two starts.)
func Status(code string) int {
	switch code {
	case InvalidArgument:
		return 400
	case PermissionDenied:
		return 403
	case NotFound:
		return 404
	case AlreadyExists, FailedPrecondition:
		return 409
	case DeadlineExceeded:
		return 504
	case Unimplemented:
		return 501
	}
	return 500
}
