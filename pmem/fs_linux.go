package pmem

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// fsNames maps statfs f_type magic numbers (linux/magic.h) to names.
var fsNames = map[uint32]string{
	unix.EXT4_SUPER_MAGIC:      "ext4", // shared by ext2 and ext3
	unix.XFS_SUPER_MAGIC:       "xfs",
	unix.BTRFS_SUPER_MAGIC:     "btrfs",
	unix.TMPFS_MAGIC:           "tmpfs",
	unix.RAMFS_MAGIC:           "ramfs",
	unix.HUGETLBFS_MAGIC:       "hugetlbfs",
	unix.OVERLAYFS_SUPER_MAGIC: "overlayfs",
	unix.NFS_SUPER_MAGIC:       "nfs",
	0x2fc12fc1:                 "zfs", // not in linux/magic.h
	unix.F2FS_SUPER_MAGIC:      "f2fs",
	unix.BCACHEFS_SUPER_MAGIC:  "bcachefs",
	unix.FUSE_SUPER_MAGIC:      "fuse",
	unix.CIFS_SUPER_MAGIC:      "cifs",
	unix.SMB2_SUPER_MAGIC:      "smb2",
	unix.CEPH_SUPER_MAGIC:      "ceph",
	unix.V9FS_MAGIC:            "9p",
	unix.SQUASHFS_MAGIC:        "squashfs",
	unix.EROFS_SUPER_MAGIC_V1:  "erofs",
	unix.MSDOS_SUPER_MAGIC:     "vfat",
	unix.EXFAT_SUPER_MAGIC:     "exfat",
	0x5346544e:                 "ntfs", // not in x/sys/unix
	unix.ECRYPTFS_SUPER_MAGIC:  "ecryptfs",
	unix.REISERFS_SUPER_MAGIC:  "reiserfs",
	unix.NILFS_SUPER_MAGIC:     "nilfs2",
	unix.OCFS2_SUPER_MAGIC:     "ocfs2",
}

// Filesystem names the filesystem holding dir, from statfs(2) f_type:
// "ext4" (also ext2/ext3, which share its magic), "xfs", "btrfs", "tmpfs",
// "overlayfs", "nfs", "zfs" and others, or "unknown(0x...)" with the magic
// number in hex. It returns an error wrapping the *os.PathError from
// statfs (for example os.ErrNotExist) if dir cannot be examined.
func Filesystem(dir string) (string, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "", fmt.Errorf("pmem: %w", &os.PathError{Op: "statfs", Path: dir, Err: err})
	}
	magic := uint32(st.Type)
	if name, ok := fsNames[magic]; ok {
		return name, nil
	}
	return fmt.Sprintf("unknown(%#x)", magic), nil
}
