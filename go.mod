module github.com/jail-sandbox/jail

go 1.26.8

require (
	github.com/landlock-lsm/go-landlock v0.11.2
	github.com/pelletier/go-toml/v2 v2.4.3
	github.com/seccomp/libseccomp-golang v0.12.0
	golang.org/x/net v0.62.0
	golang.org/x/sys v0.49.0
)

require kernel.org/pub/linux/libs/security/libcap/psx v1.2.78 // indirect
