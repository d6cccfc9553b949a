package bqemulator

import "syscall"

// sysProcAttr puts the emulator in its own process group (Stop kills the
// group) and has the kernel kill it if the test process dies first, so a
// crashed or killed test leaves no emulator behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
