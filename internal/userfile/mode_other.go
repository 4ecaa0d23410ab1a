//go:build !unix

package userfile

import "os"

// Windows grants access by ACL, not by these bits.
func exposed(os.FileInfo) bool { return false }
