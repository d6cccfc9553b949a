//go:build unix && !linux

package bqemulator

import "syscall"

// sysProcAttr puts the emulator in its own process group: Stop kills the
// group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
