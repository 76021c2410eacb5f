module github.com/jail-sandbox/jail

go 1.26.8

require (
	connectrpc.com/connect v1.21.1
	github.com/landlock-lsm/go-landlock v0.11.2
	github.com/pelletier/go-toml/v2 v2.4.3
	github.com/seccomp/libseccomp-golang v0.12.0
	golang.org/x/net v0.62.0
	golang.org/x/sys v0.49.0
	google.golang.org/protobuf v1.36.12
)

require kernel.org/pub/linux/libs/security/libcap/psx v1.2.78 // indirect
