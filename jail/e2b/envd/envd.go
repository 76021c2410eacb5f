// Package envd holds E2B's specification of envd, the daemon an E2B sandbox runs, as the E2B SDKs
// speak to it over Connect-RPC: the two .proto files as E2B publishes them (process/,
// filesystem/; Apache License 2.0, see their headers), and the Go code protoc generates from
// them, committed so that a build needs neither protoc nor its plugins. jail/e2b implements the
// services on jail's sandboxes.
//
// To regenerate (protoc 3.21 or later, with protoc-gen-go and protoc-gen-connect-go on PATH:
// go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12 and
// connectrpc.com/connect/cmd/protoc-gen-connect-go@v1.21.1), run go generate in this directory.
package envd

//go:generate protoc -I . --go_out=. --go_opt=paths=source_relative --go_opt=Mprocess/process.proto=github.com/jail-sandbox/jail/jail/e2b/envd/process --go_opt=Mfilesystem/filesystem.proto=github.com/jail-sandbox/jail/jail/e2b/envd/filesystem --connect-go_out=. --connect-go_opt=paths=source_relative --connect-go_opt=Mprocess/process.proto=github.com/jail-sandbox/jail/jail/e2b/envd/process --connect-go_opt=Mfilesystem/filesystem.proto=github.com/jail-sandbox/jail/jail/e2b/envd/filesystem process/process.proto filesystem/filesystem.proto
