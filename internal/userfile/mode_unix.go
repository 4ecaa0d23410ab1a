//go:build unix

package userfile

import "os"

func exposed(fi os.FileInfo) bool { return fi.Mode().Perm()&0o077 != 0 }
