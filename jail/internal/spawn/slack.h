// jail_setup_slack is the timer slack the setup's threads had before jail_coarse_slack, the
// caller's (slack.c), or 0 when it left them alone.
extern long jail_setup_slack;

// jail_coarse_slack gives the calling thread, before Go's runtime starts its others, a coarse
// timer slack, which they inherit; it sets jail_setup_slack when it did.
void jail_coarse_slack(void);

// jail_restore_slack gives the calling thread jail_setup_slack back. Returns 0 or -errno.
int jail_restore_slack(void);
