package faultfs

import (
	"context"
	"os"
	"path/filepath"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// node is a loopback node that logs what a power cut must undo.
type node struct {
	fs.LoopbackNode
	ffs *FS
}

var (
	_ fs.NodeWrapChilder    = (*node)(nil)
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeOpendirHandler = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeRenamer        = (*node)(nil)
	_ fs.NodeMkdirer        = (*node)(nil)
	_ fs.NodeRmdirer        = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeFsyncer        = (*node)(nil)
	_ fs.FileFsyncdirer     = (*dirHandle)(nil)
	_ fs.FileWriter         = (*file)(nil)
	_ fs.FileAllocater      = (*file)(nil)
)

// WrapChild makes every node of the tree a *node.
func (n *node) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	ln := ops.(*fs.LoopbackNode)
	return &node{LoopbackNode: fs.LoopbackNode{RootData: ln.RootData}, ffs: n.ffs}
}

// rel is the node's path relative to the backing root.
func (n *node) rel() string { return n.Path(nil) }

func (n *node) ino() uint64 { return n.StableAttr().Ino }

// wrap gives a loopback file handle undo tracking.
func (n *node) wrap(ino uint64, fh fs.FileHandle) (fs.FileHandle, syscall.Errno) {
	lf := fh.(*fs.LoopbackFile)
	fd, ok := lf.PassthroughFd() // only to read the descriptor; passthrough stays off
	if !ok {
		lf.Release(context.Background())
		return nil, syscall.EBADF
	}
	st, err := n.ffs.state(ino, fd)
	if err != nil {
		lf.Release(context.Background())
		return nil, fs.ToErrno(err)
	}
	return &file{lf: lf, fd: fd, st: st, ffs: n.ffs}, 0
}

func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	if !n.ffs.enter() {
		return nil, nil, 0, syscall.EIO
	}
	defer n.ffs.leave()
	_, statErr := os.Lstat(filepath.Join(n.RootData.Path, n.rel(), name))
	ch, fh, fuseFlags, errno := n.LoopbackNode.Create(ctx, name, flags&^syscall.O_TRUNC, mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	if statErr != nil { // it is new, not an existing file opened with O_CREAT
		n.ffs.logOp(nsOp{kind: opCreate, dir: n.ino(), rel: filepath.Join(n.rel(), name)})
	}
	wfh, errno := n.wrap(ch.StableAttr().Ino, fh)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	if flags&syscall.O_TRUNC != 0 {
		if errno := wfh.(*file).truncate(0); errno != 0 {
			return nil, nil, 0, errno
		}
	}
	return ch, wfh, fuseFlags &^ fuse.FOPEN_DIRECT_IO, 0
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if !n.ffs.enter() {
		return nil, 0, syscall.EIO
	}
	defer n.ffs.leave()
	trunc := flags&syscall.O_TRUNC != 0
	fh, fuseFlags, errno := n.LoopbackNode.Open(ctx, flags&^syscall.O_TRUNC)
	if errno != 0 {
		return nil, 0, errno
	}
	wfh, errno := n.wrap(n.ino(), fh)
	if errno != 0 {
		return nil, 0, errno
	}
	if trunc {
		if errno := wfh.(*file).truncate(0); errno != 0 {
			wfh.(*file).Release(ctx)
			return nil, 0, errno
		}
	}
	return wfh, fuseFlags &^ fuse.FOPEN_DIRECT_IO, 0
}

func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	ds, errno := fs.NewLoopbackDirStream(filepath.Join(n.RootData.Path, n.rel()))
	if errno != 0 {
		return nil, 0, errno
	}
	return &dirHandle{DirStream: ds, n: n}, 0, 0
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	if !n.ffs.enter() {
		return syscall.EIO
	}
	defer n.ffs.leave()
	rel := filepath.Join(n.rel(), name)
	fi, err := os.Lstat(filepath.Join(n.RootData.Path, rel))
	if err != nil {
		return fs.ToErrno(err)
	}
	if fi.IsDir() {
		return syscall.EISDIR
	}
	grave, err := n.ffs.toGrave(rel)
	if err != nil {
		return fs.ToErrno(err)
	}
	n.ffs.logOp(nsOp{kind: opUnlink, dir: n.ino(), rel: rel, grave: grave})
	return 0
}

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if !n.ffs.enter() {
		return syscall.EIO
	}
	defer n.ffs.leave()
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	if flags != 0 {
		return syscall.ENOTSUP // RENAME_EXCHANGE / NOREPLACE are not modelled
	}
	rel, rel2 := filepath.Join(n.rel(), name), filepath.Join(np.rel(), newName)
	if _, err := os.Lstat(filepath.Join(n.RootData.Path, rel)); err != nil {
		return fs.ToErrno(err)
	}
	op := nsOp{kind: opRename, dir: n.ino(), dir2: np.ino(), rel: rel, rel2: rel2}
	if fi, err := os.Lstat(filepath.Join(n.RootData.Path, rel2)); err == nil {
		if fi.IsDir() {
			return syscall.ENOTSUP // replacing a directory is not modelled
		}
		grave, err := n.ffs.toGrave(rel2)
		if err != nil {
			return fs.ToErrno(err)
		}
		op.grave = grave
	}
	if errno := n.LoopbackNode.Rename(ctx, name, &np.LoopbackNode, newName, 0); errno != 0 {
		if op.grave != "" {
			_ = os.Rename(filepath.Join(n.ffs.grave, op.grave), filepath.Join(n.RootData.Path, rel2)) // put the replaced file back; the rename's error is the one to report
		}
		return errno
	}
	n.ffs.logOp(op)
	return 0
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if !n.ffs.enter() {
		return nil, syscall.EIO
	}
	defer n.ffs.leave()
	ch, errno := n.LoopbackNode.Mkdir(ctx, name, mode, out)
	if errno == 0 {
		n.ffs.logOp(nsOp{kind: opMkdir, dir: n.ino(), rel: filepath.Join(n.rel(), name)})
	}
	return ch, errno
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	if !n.ffs.enter() {
		return syscall.EIO
	}
	defer n.ffs.leave()
	rel := filepath.Join(n.rel(), name)
	fi, err := os.Lstat(filepath.Join(n.RootData.Path, rel))
	if err != nil {
		return fs.ToErrno(err)
	}
	errno := n.LoopbackNode.Rmdir(ctx, name)
	if errno == 0 {
		n.ffs.logOp(nsOp{kind: opRmdir, dir: n.ino(), rel: rel, perm: fi.Mode().Perm()})
	}
	return errno
}

// Setattr logs a size change (truncate, ftruncate) and passes the rest
// through.
func (n *node) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if !n.ffs.enter() {
		return syscall.EIO
	}
	defer n.ffs.leave()
	var lf fs.FileHandle
	if f, ok := fh.(*file); ok {
		lf = f.lf
	}
	if size, ok := in.GetSize(); ok {
		f, _ := fh.(*file)
		if f == nil {
			// truncate(2) by name: open the file for the log.
			h, _, errno := n.LoopbackNode.Open(ctx, syscall.O_RDWR)
			if errno != 0 {
				return errno
			}
			wh, errno := n.wrap(n.ino(), h)
			if errno != 0 {
				return errno
			}
			f = wh.(*file)
			defer f.Release(ctx)
		}
		if errno := f.truncate(int64(size)); errno != 0 {
			return errno
		}
		in.Valid &^= fuse.FATTR_SIZE
	}
	return n.LoopbackNode.Setattr(ctx, lf, in, out)
}

// Fsync makes the file durable (fsync, fdatasync and msync MS_SYNC all
// arrive here) once SyncLatency has passed, if the power is still on.
func (n *node) Fsync(ctx context.Context, fh fs.FileHandle, flags uint32) syscall.Errno {
	n.ffs.syncArrived()
	if !n.ffs.enter() {
		return syscall.EIO
	}
	defer n.ffs.leave()
	f, ok := fh.(*file)
	if !ok {
		return syscall.EBADF
	}
	n.ffs.fsyncs.Add(1)
	f.st.mu.Lock()
	defer f.st.mu.Unlock()
	return fs.ToErrno(f.st.synced())
}

// dirHandle is a directory stream whose fsync commits namespace
// operations.
type dirHandle struct {
	fs.DirStream
	n *node
}

func (d *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	if r, ok := d.DirStream.(fs.FileReaddirenter); ok {
		return r.Readdirent(ctx)
	}
	if !d.HasNext() {
		return nil, 0
	}
	de, errno := d.Next()
	return &de, errno
}

func (d *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if s, ok := d.DirStream.(fs.FileSeekdirer); ok {
		return s.Seekdir(ctx, off)
	}
	return syscall.ENOTSUP
}

func (d *dirHandle) Releasedir(ctx context.Context, flags uint32) { d.Close() }

func (d *dirHandle) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	d.n.ffs.syncArrived()
	if !d.n.ffs.enter() {
		return syscall.EIO
	}
	defer d.n.ffs.leave()
	d.n.ffs.dirFsyncs.Add(1)
	return fs.ToErrno(d.n.ffs.dirSynced(d.n.ino()))
}

// file is an open regular file: writes are logged before they reach the
// backing file. It deliberately has no PassthroughFd, so the kernel sends
// every read and write to the server.
type file struct {
	lf  *fs.LoopbackFile
	fd  int // lf's descriptor
	st  *fileState
	ffs *FS
}

func (f *file) Read(ctx context.Context, buf []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if !f.ffs.enter() {
		return nil, syscall.EIO
	}
	defer f.ffs.leave()
	return f.lf.Read(ctx, buf, off)
}

func (f *file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	if !f.ffs.enter() {
		return 0, syscall.EIO
	}
	defer f.ffs.leave()
	f.st.mu.Lock()
	defer f.st.mu.Unlock()
	if err := f.st.save(off, int64(len(data))); err != nil {
		return 0, fs.ToErrno(err)
	}
	f.ffs.writes.Add(1)
	f.ffs.writeBytes.Add(int64(len(data)))
	n, err := syscall.Pwrite(f.fd, data, off)
	return uint32(n), fs.ToErrno(err)
}

// truncate sets the size, logging the pages a shrink drops. The caller
// (Create, Open, Setattr) holds the power lock.
func (f *file) truncate(size int64) syscall.Errno {
	f.st.mu.Lock()
	defer f.st.mu.Unlock()
	var cur syscall.Stat_t
	if err := syscall.Fstat(f.fd, &cur); err != nil {
		return fs.ToErrno(err)
	}
	if size < cur.Size {
		if err := f.st.save(size, cur.Size-size); err != nil {
			return fs.ToErrno(err)
		}
	}
	return fs.ToErrno(syscall.Ftruncate(f.fd, size))
}

const (
	fallocKeepSize      = 0x01
	fallocPunchHole     = 0x02
	fallocCollapseRange = 0x08
	fallocZeroRange     = 0x10
	fallocInsertRange   = 0x20
)

func (f *file) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	if !f.ffs.enter() {
		return syscall.EIO
	}
	defer f.ffs.leave()
	f.st.mu.Lock()
	defer f.st.mu.Unlock()
	if mode&(fallocCollapseRange|fallocInsertRange) != 0 {
		return syscall.EOPNOTSUPP
	}
	if mode&(fallocPunchHole|fallocZeroRange) != 0 {
		if err := f.st.save(int64(off), int64(size)); err != nil {
			return fs.ToErrno(err)
		}
	}
	return f.lf.Allocate(ctx, off, size, mode)
}

func (f *file) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return f.lf.Getattr(ctx, out)
}

func (f *file) Lseek(ctx context.Context, off uint64, whence uint32) (uint64, syscall.Errno) {
	return f.lf.Lseek(ctx, off, whence)
}

func (f *file) Flush(ctx context.Context) syscall.Errno { return f.lf.Flush(ctx) }

func (f *file) Release(ctx context.Context) syscall.Errno { return f.lf.Release(ctx) }
