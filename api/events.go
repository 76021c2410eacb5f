package api

import (
	"encoding/json"
	"fmt"
)

// Event kinds of an exec or attach stream (application/x-ndjson, one event a line).
const (
	EventStart  = "start"
	EventStdout = "stdout"
	EventStderr = "stderr"
	EventExit   = "exit"
	EventError  = "error"
)

// Event is one line of a stream. Which fields it has depends on its kind: PID (start), Data
// (stdout, stderr), Exit and Duration (exit), Error (error).
type Event struct {
	Event    string
	PID      int
	Data     []byte
	Exit     *Exit
	Duration string
	Error    *Error
}

type startEvent struct {
	Event string `json:"event"`
	PID   int    `json:"pid"`
}

type dataEvent struct {
	Event string `json:"event"`
	Data  []byte `json:"data"`
}

type exitEvent struct {
	Event string `json:"event"`
	Exit
	Duration string `json:"duration,omitempty"`
}

type errorEvent struct {
	Event string `json:"event"`
	Error *Error `json:"error"`
}

// MarshalJSON writes the event in its kind's shape (docs/api.md).
func (e Event) MarshalJSON() ([]byte, error) {
	switch e.Event {
	case EventStart:
		return json.Marshal(startEvent{e.Event, e.PID})
	case EventStdout, EventStderr:
		return json.Marshal(dataEvent{e.Event, e.Data})
	case EventExit:
		var x Exit
		if e.Exit != nil {
			x = *e.Exit
		}
		return json.Marshal(exitEvent{e.Event, x, e.Duration})
	case EventError:
		return json.Marshal(errorEvent{e.Event, e.Error})
	}
	return nil, fmt.Errorf("unknown event %q", e.Event)
}

// UnmarshalJSON reads an event of any kind.
func (e *Event) UnmarshalJSON(b []byte) error {
	var raw struct {
		Event    string  `json:"event"`
		PID      int     `json:"pid"`
		Data     []byte  `json:"data"`
		ExitCode *int    `json:"exit_code"`
		Signal   *string `json:"signal"`
		TimedOut bool    `json:"timed_out"`
		Duration string  `json:"duration"`
		Error    *Error  `json:"error"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*e = Event{Event: raw.Event, PID: raw.PID, Data: raw.Data, Duration: raw.Duration, Error: raw.Error}
	if raw.ExitCode != nil {
		e.Exit = &Exit{ExitCode: *raw.ExitCode, Signal: raw.Signal, TimedOut: raw.TimedOut}
	}
	return nil
}
