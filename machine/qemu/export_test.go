package qemu

// PID is the process id of vm's QEMU, for tests that end it from outside.
func PID(vm *VM) int { return vm.cmd.Process.Pid }
