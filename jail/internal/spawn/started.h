// jail_started_ns is CLOCK_MONOTONIC, in nanoseconds, when this process started (started.c).
extern long long jail_started_ns;
