// The jail command opts in to jail/spawn_early.c starting the sandbox's init before Go's runtime.
const int jail_early_opt_in = 1;
