package jail

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/jail-sandbox/jail/jail/internal/wire"
)

// readInit reads init's messages until init is gone, hands every one but an error to the
// observer as it comes, and then sends the error (or nothing) on sb.report, where wait takes it.
// A line that is not a message is passed on as the report, so decodeReport names the problem.
func (sb *sandbox) readInit(r io.ReadCloser) {
	defer r.Close()
	var report []byte
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<16)
	for sc.Scan() {
		var msg wire.Message
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			report = append([]byte(nil), sc.Bytes()...)
			break
		}
		switch {
		case msg.Error != nil:
			report, _ = json.Marshal(msg.Error)
		case msg.Landlock != nil:
			sb.obs.landlockApplied(*msg.Landlock)
		case msg.Started != nil:
			sb.obs.started(sb, msg.Started.PID, &msg.Started.Namespaces)
		case msg.Exited != nil:
			sb.obs.exited(msg.Exited)
		case msg.Denial != nil || msg.MoreDenials:
			sb.obs.denied(msg.Denial) // explain_report.go
		}
	}
	if sc.Err() != nil {
		report = []byte(sc.Err().Error()) // not JSON: decodeReport says so
	}
	io.Copy(io.Discard, r) // init blocks on nothing it writes, whatever came after
	sb.report <- report
}
