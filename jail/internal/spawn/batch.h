// jail_batch is set when jail switched its own threads from SCHED_OTHER to SCHED_BATCH
// (batch.c); the command gets SCHED_OTHER back.
extern int jail_batch;

// jail_batch_own_threads switches the calling thread, before Go's runtime starts, from
// SCHED_OTHER to SCHED_BATCH; it sets jail_batch when it did.
void jail_batch_own_threads(void);

// jail_unbatch_thread gives the calling thread SCHED_OTHER back (its nice value stays), with the
// same call that took it away. Returns 0 or -errno.
int jail_unbatch_thread(void);
