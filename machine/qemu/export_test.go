package qemu

// PID is the process id of vm's QEMU, for tests that end it from outside.
func PID(vm *VM) int { return vm.cmd.Process.Pid }

// SetAgentDisk points the disk d's VMs get as their agent's at path.
func SetAgentDisk(d *Driver, path string) { d.boot.AgentDisk = path }
