package bqemulator

import "syscall"

// sysProcAttr puts the emulator in its own process group (Stop kills it)
// and has the kernel kill it if the test process dies first.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
