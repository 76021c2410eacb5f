package server

import (
	"encoding/json"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/internal/http1"
)

// response is one answer in the API's terms: its JSON values, its error object, its NDJSON
// streams.
type response struct{ *http1.Response }

// json answers with v as JSON.
func (w *response) json(status int, v any) {
	if err := w.JSON(status, v); err != nil {
		w.error(api.Errorf(api.Internal, "encode the answer: %s", err))
	}
}

// error answers with err as the API's error object and its status.
func (w *response) error(err error) {
	e := api.AsError(err)
	w.json(api.Status(e.Code), api.ErrorBody{Error: e})
}

// noContent answers 204.
func (w *response) noContent() { w.Head(204, "", 0) }

// lazyBody is a body of unknown length that starts the response (200, contentType) with its
// first byte: until then an error can still be answered as one.
type lazyBody struct {
	w           *response
	contentType string
}

func (b *lazyBody) Write(p []byte) (int, error) {
	if !b.w.Started {
		b.w.Head(200, b.contentType, -1)
	}
	return b.w.Write(p)
}

// event writes one line of an NDJSON stream.
func (w *response) event(e api.Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
