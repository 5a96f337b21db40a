//go:build !linux

package dnsserver

const reusePort = 0
