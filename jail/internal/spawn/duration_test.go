package spawn

import (
	"testing"
	"time"
)

// TestFormatDurationIsGos: `jail exec`'s C path says how long a timeout was as its Go path does.
func TestFormatDurationIsGos(t *testing.T) {
	for _, d := range []time.Duration{
		0, 1, 999, time.Microsecond, 1500 * time.Nanosecond, time.Millisecond, 100 * time.Millisecond,
		1500 * time.Microsecond, time.Second, 1500 * time.Millisecond, 90 * time.Second, time.Minute,
		time.Hour, time.Hour + time.Second, 25*time.Hour + 61*time.Second + 5*time.Millisecond, -time.Second,
		123456789 * time.Nanosecond, 7*time.Minute + 3*time.Second + 20*time.Millisecond,
	} {
		if got, want := formatDuration(int64(d)), d.String(); got != want {
			t.Errorf("%d ns: %q, want %q", int64(d), got, want)
		}
	}
}
