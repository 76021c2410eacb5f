package spawn

/*
#include "session.h"
#include "spawn.h"
*/
import "C"

import (
	"os"
	"unsafe"

	"github.com/jail-sandbox/jail/jail/internal/session"
)

// session.Msg is C's struct jail_msg, field for field: these fail to build otherwise.
var (
	_ [unsafe.Sizeof(C.struct_jail_msg{}) - session.HeaderSize]byte
	_ [session.HeaderSize - unsafe.Sizeof(C.struct_jail_msg{})]byte
	_ [unsafe.Offsetof(C.struct_jail_msg{}.len) - unsafe.Offsetof(session.Msg{}.Len)]byte
	_ [unsafe.Offsetof(session.Msg{}.Len) - unsafe.Offsetof(C.struct_jail_msg{}.len)]byte
	_ [unsafe.Offsetof(C.struct_jail_msg{}.ns1) - unsafe.Offsetof(session.Msg{}.NS1)]byte
	_ [unsafe.Offsetof(session.Msg{}.NS1) - unsafe.Offsetof(C.struct_jail_msg{}.ns1)]byte
	_ [C.JAIL_MSG_MAX - session.MaxMsg]byte
	_ [session.MaxMsg - C.JAIL_MSG_MAX]byte
	_ [C.JAIL_EXEC_MERGE - session.ExecMerge]byte
	_ [session.ExecMerge - C.JAIL_EXEC_MERGE]byte
)

// The names jail's binary runs under, which its constructors (spawner.c) or main dispatch on.
var (
	SpawnerArg0 = C.GoString(C.jail_spawner_arg0) // the spawner inside a persistent sandbox
	KeeperArg0  = C.GoString(C.jail_keeper_arg0)  // the keeper, as ps shows it
	APIArg0     = C.GoString(C.jail_api_arg0)     // an HTTP connection's handler, started by the keeper
	EgressArg0  = C.GoString(C.jail_egress_arg0)  // a persistent sandbox's egress proxy
)

// TakeKeeperLink returns this process's end of the socket pair to the keeper `jail create`'s
// constructor forked (keeper.c), or nil when it forked none. It is taken once.
func TakeKeeperLink() *os.File {
	fd := C.jail_keeper_link
	if fd < 0 {
		return nil
	}
	C.jail_keeper_link = -1
	return os.NewFile(uintptr(fd), "keeper")
}
