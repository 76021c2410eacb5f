// The end of a run's audit (package audit) in jail's waiter, when the host has left: whether any
// of the baseline's sentinels changed, and, when one did, jail re-executed as jail_audit_arg0 to
// list what the run wrote unseen.

// jail_audit_arg0 is argv[0] of that jail (spawn.go's AuditArg0): jail.MaybeInit runs the audit
// when it sees it, with the baseline on descriptor 3 and the command's status in argv[1].
extern const char *const jail_audit_arg0;

// jail_audit_changed says whether a sentinel of the baseline in the file fd (audit.Encode) is
// there with another inode or ctime than the walk saw.
int jail_audit_changed(int fd);

// jail_audit_exec executes jail as jail_audit_arg0 with the baseline fd as descriptor 3, to exit
// with status; it returns only when that fails, having said so on stderr.
void jail_audit_exec(int fd, int status);
