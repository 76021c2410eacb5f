#ifndef JAIL_BOOT_H
#define JAIL_BOOT_H

// jail_boot_one_p has the Go runtimes this process starts (jail's host, init's setup) boot with
// one P: boot.c says why and how.
void jail_boot_one_p(char **envp);

// jail_boot_swapped is the environment entry jail_boot_one_p lent to GOMAXPROCS=1 (NULL: none);
// boot.go gives it back before anything reads the environment.
extern char *jail_boot_swapped;

#endif
