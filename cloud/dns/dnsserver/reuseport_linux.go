package dnsserver

import "golang.org/x/sys/unix"

const reusePort = unix.SO_REUSEPORT
