# bubblewrap's arguments for the sandbox of a jail plan (`jail --dry-run`), one per line: its
# namespaces, hostname, mounts in the plan's order and working directory, so that
# bench/startup.sh compares the two launchers building the same sandbox. A protected path is
# bound only where it exists (--ro-bind-try): bwrap cannot keep a missing one from being created.
"--unshare-all", (if .namespaces.net then empty else "--share-net" end),
"--die-with-parent", "--new-session", "--hostname", .hostname,
(.mounts[] |
	if .kind == "ro-bind" then "--ro-bind", .source, .target
	elif .kind == "bind" then "--bind", .source, .target
	elif .kind == "protect" then "--ro-bind-try", .target, .target
	elif .kind == "tmpfs" then "--tmpfs", .target
	elif .kind == "hide-dir" then "--tmpfs", .target, "--remount-ro", .target
	elif .kind == "hide-file" then "--ro-bind", "/dev/null", .target
	elif .kind == "proc" then "--proc", .target
	elif .kind == "dev" then "--dev", .target
	elif .kind == "symlink" then "--symlink", .source, .target
	elif .kind == "dir" then "--dir", .target
	else error("no bwrap equivalent for mount kind \(.kind)") end),
"--chdir", .cwd, "--"
