package mcpclient

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// ChromiumSandbox reports whether chromium's sandbox can run for this
// process and, when it cannot, why, in words for the user. Chromium
// refuses its sandbox as root, and without root it needs user namespaces
// (Debian's chromium has no setuid helper): they are probed by starting a
// trivial program in a new one.
func ChromiumSandbox() (ok bool, why string) {
	if os.Geteuid() == 0 {
		return false, "sagasu runs as root, and chromium does not run its sandbox as root: the browser runs with --no-sandbox; run sagasu as an ordinary user to have the sandbox"
	}
	if err := probeUserNamespace(); err != nil {
		return false, fmt.Sprintf("this system does not let an ordinary user create a user namespace (%v), which chromium's sandbox needs: "+
			"the browser runs with --no-sandbox; allow them (sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces > 0, "+
			"or an AppArmor profile for chromium) to have the sandbox", err)
	}
	return true, ""
}

func probeUserNamespace() error {
	prog, err := exec.LookPath("true")
	if err != nil {
		prog = "/bin/true"
	}
	cmd := exec.Command(prog)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	return cmd.Run()
}
