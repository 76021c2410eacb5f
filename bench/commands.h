// Shared by the benchmarks' C drivers (starts.c, phases.sh's): their command lines.
#include <string.h>

// split_commands splits argv from argv[from] on, "NAME CMD... [:: NAME CMD...]", into at most max
// commands: name[i] and cmd[i], each CMD ended by a NULL written over its "::". Returns how many.
static int split_commands(int argc, char **argv, int from, char **name, char ***cmd, int max) {
	int k = 0;
	for (int i = from; i < argc && k < max; k++) {
		name[k] = argv[i++];
		cmd[k] = argv + i;
		while (i < argc && strcmp(argv[i], "::") != 0)
			i++;
		if (i < argc)
			argv[i++] = NULL;
	}
	return k;
}
