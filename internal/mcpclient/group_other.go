//go:build !unix

package mcpclient

import "os/exec"

// ownGroup does nothing where there are no Unix process groups; the server
// process alone is stopped.
func ownGroup(*exec.Cmd) {}

// terminateGroup ends the process (there is no gentler signal here).
func terminateGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// killGroup ends the process.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
