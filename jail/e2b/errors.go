package e2b

import (
	"encoding/json"
	"errors"
	"net/http"

	"connectrpc.com/connect"

	"github.com/jail-sandbox/jail/api"
)

// E2B's error shapes. The control plane and envd's HTTP routes answer {"code": status,
// "message": …} with that status (the SDKs read code, not the status, to tell "not found");
// the Connect-RPC services answer Connect errors, whose codes jail's API codes map onto one to
// one. Every message is jail's one line, naming what jail does not do where that is the cause.

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// writeError answers an error of the control plane or of envd's HTTP routes.
func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]any{"code": status, "message": message})
}

// writeFailure answers err: an unsupported request 400, jail's API errors with their status.
func writeFailure(w http.ResponseWriter, err error) {
	var u unsupportedError
	if errors.As(err, &u) {
		writeError(w, http.StatusBadRequest, u.Error())
		return
	}
	e := api.AsError(err)
	writeError(w, api.Status(e.Code), e.Message)
}

var connectCodes = map[string]connect.Code{
	api.InvalidArgument:    connect.CodeInvalidArgument,
	api.PermissionDenied:   connect.CodePermissionDenied,
	api.NotFound:           connect.CodeNotFound,
	api.AlreadyExists:      connect.CodeAlreadyExists,
	api.FailedPrecondition: connect.CodeFailedPrecondition,
	api.DeadlineExceeded:   connect.CodeDeadlineExceeded,
	api.Unimplemented:      connect.CodeUnimplemented,
	api.Internal:           connect.CodeInternal,
}

// connectError is err as a Connect error.
func connectError(err error) error {
	e := api.AsError(err)
	code, ok := connectCodes[e.Code]
	if !ok {
		code = connect.CodeInternal
	}
	return connect.NewError(code, errors.New(e.Message))
}

// notImplemented is the Connect error of a method jail does not offer.
func notImplemented(what string) error {
	return connect.NewError(connect.CodeUnimplemented, errors.New("jail: this E2B endpoint does not support "+what))
}
