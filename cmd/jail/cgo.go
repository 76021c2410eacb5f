package main

// cgo compiles early.c into the jail command because this file imports "C" (the preamble is
// empty).

import "C"
