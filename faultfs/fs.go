package faultfs

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// PageSize is the unit of the undo log, in bytes: DropAll and KeepRandom
// cuts keep or drop whole pages, never part of one.
const PageSize = 4096

// SectorSize is the unit TearSectors keeps or drops, in bytes.
const SectorSize = 512

// CutMode says what a cut does with what was not made durable.
type CutMode int

const (
	// DropAll drops every unsynced page and undoes every namespace
	// operation not made durable by a directory fsync.
	DropAll CutMode = iota
	// KeepRandom keeps each unsynced page's new contents with probability
	// 1/2 and a random prefix of the pending namespace operations.
	KeepRandom
	// TearSectors is KeepRandom for each 512-byte sector of an unsynced
	// page on its own, so a page can come back part old, part new (a
	// disk promises sector atomicity, not page atomicity).
	TearSectors
)

// Options configure Mount.
type Options struct {
	// Seed seeds KeepRandom's choices (the same seed and the same
	// requests make the same choices).
	Seed uint64
	// StrictNames makes a directory fsync commit only the namespace
	// operations in that directory (a rename: in either directory), not
	// every operation logged before them: the letter of POSIX, under
	// which a new directory's own entry needs an fsync of its parent.
	StrictNames bool
	// Debug logs every FUSE request (go-fuse's debug output).
	Debug bool
	// SyncLatency is how long every FSYNC and FSYNCDIR request takes
	// before it makes anything durable, as a disk's cache flush takes
	// time (one fdatasync costs 150-240 µs on the disks measured here;
	// the e2e power-cut tests use 1 ms). The request sleeps without the
	// power lock, so a PowerOff during that time loses the sync: it then
	// fails with EIO. This widens the window in which software that
	// replies before its sync has finished can be caught.
	SyncLatency time.Duration
}

// Stats count the requests that matter for durability since Mount.
type Stats struct {
	Writes     int64 // WRITE requests (write(2) and written-back mapped pages)
	WriteBytes int64 // bytes in those requests
	Fsyncs     int64 // FSYNC requests (fsync, fdatasync, msync MS_SYNC)
	DirFsyncs  int64 // FSYNCDIR requests
	Refused    int64 // requests refused with EIO after PowerOff
	Cuts       int64 // Cut calls completed
}

// CutStats say what one Cut rolled back.
type CutStats struct {
	Files        int // files with unsynced pages or a size change
	DroppedPages int // pages given back their durable contents
	KeptPages    int // unsynced pages kept whole (KeepRandom, TearSectors)
	TornPages    int // unsynced pages that came back part old, part new (TearSectors)
	UndoneOps    int // namespace operations undone
	KeptOps      int // pending namespace operations kept (KeepRandom, TearSectors)
}

// FS is a mounted power-cut filesystem. Its methods other than Stats,
// PowerOff and AtSync must not be called concurrently.
type FS struct {
	backing, grave, mnt string
	opts                Options
	rng                 *rand.Rand

	// power is held shared by every request that reads or changes a
	// backing file or name, for the whole request, and exclusively by
	// PowerOff, so that the power goes off between requests, never
	// inside one.
	power sync.RWMutex
	off   bool // guarded by power: refuse every request

	hookMu   sync.Mutex // guards the AtSync hook
	hookN    int64      // the sync (counted from AtSync) that runs hookFn
	hookSeen int64      // syncs seen since AtSync
	hookFn   func()

	mu       sync.Mutex // guards files, log, graveSeq
	files    map[uint64]*fileState
	log      []nsOp
	graveSeq int

	server *fuse.Server

	writes, writeBytes, fsyncs, dirFsyncs, refused, cuts atomic.Int64
}

// Mount serves backing (an existing directory) at mnt (an existing empty
// directory) and returns once the mount is up. Everything in backing is
// taken as durable. It keeps unlinked files in a directory beside backing
// (backing + ".faultfs-unlinked"), emptied now and at every Cut. It needs
// /dev/fuse and either root (direct mount) or fusermount3.
func Mount(backing, mnt string, opts Options) (*FS, error) {
	backing, err := filepath.Abs(backing)
	if err != nil {
		return nil, err
	}
	f := &FS{
		backing: backing,
		grave:   backing + ".faultfs-unlinked",
		mnt:     mnt,
		opts:    opts,
		rng:     rand.New(rand.NewPCG(opts.Seed, 0x9e3779b97f4a7c15)),
	}
	if err := f.resetGrave(); err != nil {
		return nil, err
	}
	if err := f.mount(); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *FS) resetGrave() error {
	if err := os.RemoveAll(f.grave); err != nil {
		return fmt.Errorf("faultfs: %w", err)
	}
	if err := os.Mkdir(f.grave, 0o700); err != nil {
		return fmt.Errorf("faultfs: %w", err)
	}
	return nil
}

func (f *FS) mount() error {
	var st syscall.Stat_t
	if err := syscall.Stat(f.backing, &st); err != nil {
		return fmt.Errorf("faultfs: %s: %w", f.backing, err)
	}
	f.files = map[uint64]*fileState{}
	f.log = nil
	root := &fs.LoopbackRoot{Path: f.backing, Dev: uint64(st.Dev)}
	rn := &node{LoopbackNode: fs.LoopbackNode{RootData: root}, ffs: f}
	root.RootNode = rn
	sec := time.Second
	server, err := fs.Mount(f.mnt, rn, &fs.Options{
		EntryTimeout: &sec,
		AttrTimeout:  &sec,
		MountOptions: fuse.MountOptions{
			DirectMount: true,
			FsName:      "faultfs:" + f.backing,
			Name:        "faultfs",
			Debug:       f.opts.Debug,
		},
	})
	if err != nil {
		return fmt.Errorf("faultfs: mount %s: %w", f.mnt, err)
	}
	f.server = server
	f.power.Lock()
	f.off = false
	f.power.Unlock()
	return nil
}

// PowerOff turns the power off at once, as pulling the plug does: it
// waits for the requests being served to finish (each is one write or
// one sync, atomic as a disk's command is) and from then on every request
// that would read or change a file or a name fails with EIO, so nothing
// more reaches the backing files and no sync makes anything more
// durable. (Lookups, attributes and directory listings still pass
// through: they change nothing.) What was not synced by then is still
// in the backing files; Cut drops it. A test calls PowerOff, then kills
// the processes that use the mount (their last writes, and the dirty
// pages the kernel writes back as their files close, are refused), then
// calls Cut. PowerOff may be called from any goroutine, while requests
// are served; a second call does nothing.
func (f *FS) PowerOff() {
	f.power.Lock()
	f.off = true
	f.power.Unlock()
}

// enter admits a request: it takes the power lock shared and reports
// true, or, once the power is off, counts the request refused and
// reports false. A request admitted calls leave when it is done.
func (f *FS) enter() bool {
	f.power.RLock()
	if f.off {
		f.power.RUnlock()
		f.refused.Add(1)
		return false
	}
	return true
}

func (f *FS) leave() { f.power.RUnlock() }

// AtSync arranges for fn to run when the n-th sync request (FSYNC or
// FSYNCDIR, counted from this call, refused ones included) arrives,
// before that request does anything: with fn calling PowerOff, the power
// goes off exactly at the n-th sync, which then fails with EIO and makes
// nothing durable. fn runs once, on the goroutine serving the request,
// without any lock of the filesystem held; it must not call Cut or
// Close. A later AtSync replaces an earlier one that has not run;
// AtSync(0, nil) cancels it.
func (f *FS) AtSync(n int64, fn func()) {
	f.hookMu.Lock()
	f.hookN, f.hookSeen, f.hookFn = n, 0, fn
	f.hookMu.Unlock()
}

// syncArrived runs the AtSync hook if this sync is the one it waits for,
// then waits SyncLatency. Every sync request calls it first.
func (f *FS) syncArrived() {
	f.hookMu.Lock()
	f.hookSeen++
	var fn func()
	if f.hookFn != nil && f.hookSeen == f.hookN {
		fn, f.hookFn = f.hookFn, nil
	}
	f.hookMu.Unlock()
	if fn != nil {
		fn()
	}
	if d := f.opts.SyncLatency; d > 0 {
		time.Sleep(d) // the disk's flush takes this long (the emulated latency, not a wait for an event)
	}
}

// Stats returns the request counters.
func (f *FS) Stats() Stats {
	return Stats{
		Writes: f.writes.Load(), WriteBytes: f.writeBytes.Load(), Fsyncs: f.fsyncs.Load(),
		DirFsyncs: f.dirFsyncs.Load(), Refused: f.refused.Load(), Cuts: f.cuts.Load(),
	}
}

// Cut drops what the power cut lost. The order is PowerOff, kill every
// process that used the mount (SIGKILL) and wait for it to exit, then
// Cut; Cut calls PowerOff itself if the caller did not (a cut after a
// clean shutdown). Every request is refused from the PowerOff on (EIO:
// that includes the dirty pages the kernel writes back at unmount); the
// filesystem is unmounted, the backing directory rolled back to what
// was durable (all of it, or in KeepRandom mode a random subset) and a
// fresh filesystem mounted, powered on, at the same place. mode says
// what happens to what was not durable. On error the filesystem may be
// left unmounted.
//
// Killing before PowerOff would not be a power cut: the kernel still
// serves a killed process's requests in flight (an msync's FSYNC among
// them) and writes its dirty pages back as its files close, so a sync
// the process had started, but not finished when it replied, would
// still complete and hide the bug (TestPowerCut/msync-ack-before-sync).
func (f *FS) Cut(mode CutMode) (CutStats, error) {
	f.PowerOff()
	if err := f.unmount(); err != nil {
		return CutStats{}, err
	}
	cs, err := f.rollBack(mode)
	if err != nil {
		return cs, err
	}
	if err := f.resetGrave(); err != nil {
		return cs, err
	}
	if err := f.mount(); err != nil {
		return cs, err
	}
	f.cuts.Add(1)
	return cs, nil
}

// Close unmounts without cutting the power: the backing directory keeps
// what was written (as after a clean shutdown with every page written back).
func (f *FS) Close() error {
	if f.server == nil {
		return nil
	}
	if err := f.unmount(); err != nil {
		return err
	}
	return os.RemoveAll(f.grave)
}

// unmount takes the filesystem down and waits until the server has
// stopped. The kernel answers EBUSY while a file is still open; a killed
// process's files close as it exits, so that is retried for a while.
func (f *FS) unmount() error {
	var err error
	for try := 0; try < 100; try++ {
		if err = f.server.Unmount(); err == nil {
			break
		}
		if !errors.Is(err, syscall.EBUSY) {
			break
		}
		time.Sleep(50 * time.Millisecond) // polling the kernel: nothing to wait on
	}
	if err != nil {
		return fmt.Errorf("faultfs: unmount %s: %w", f.mnt, err)
	}
	f.server.Wait()
	f.server = nil
	return nil
}

// rollBack gives every file its durable contents and size, then undoes
// the pending namespace operations newest first. Called unmounted.
func (f *FS) rollBack(mode CutMode) (CutStats, error) {
	var cs CutStats
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ino := range slices.Sorted(maps.Keys(f.files)) {
		st := f.files[ino]
		st.mu.Lock()
		kept, torn, dropped, changed, err := st.rollBack(mode, f.rng)
		st.close()
		st.mu.Unlock()
		if err != nil {
			return cs, err
		}
		cs.KeptPages += kept
		cs.TornPages += torn
		cs.DroppedPages += dropped
		if changed {
			cs.Files++
		}
	}
	f.files = map[uint64]*fileState{}
	keep := 0
	if mode == KeepRandom || mode == TearSectors {
		keep = f.rng.IntN(len(f.log) + 1)
	}
	if err := f.commitLocked(keep); err != nil {
		return cs, err
	}
	cs.KeptOps = keep
	for i := len(f.log) - 1; i >= 0; i-- {
		if err := f.log[i].undo(f); err != nil {
			return cs, err
		}
		cs.UndoneOps++
	}
	f.log = nil
	return cs, nil
}

// commitLocked makes the first n logged namespace operations durable:
// files they unlinked or replaced are deleted for good. f.mu is held.
func (f *FS) commitLocked(n int) error {
	for _, op := range f.log[:n] {
		if op.grave != "" {
			if err := os.Remove(filepath.Join(f.grave, op.grave)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("faultfs: %w", err)
			}
		}
	}
	f.log = append(f.log[:0:0], f.log[n:]...)
	return nil
}

// dirSynced handles an fsync of the directory whose inode is dir: every
// logged operation up to the last that touched dir becomes durable, or
// with StrictNames only the operations that touched dir.
func (f *FS) dirSynced(dir uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	touches := func(op nsOp) bool { return op.dir == dir || (op.kind == opRename && op.dir2 == dir) }
	if f.opts.StrictNames {
		var rest []nsOp
		for _, op := range f.log {
			if !touches(op) {
				rest = append(rest, op)
				continue
			}
			if op.grave != "" {
				if err := os.Remove(filepath.Join(f.grave, op.grave)); err != nil && !errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("faultfs: %w", err)
				}
			}
		}
		f.log = rest
		return nil
	}
	last := -1
	for i, op := range f.log {
		if touches(op) {
			last = i
		}
	}
	return f.commitLocked(last + 1)
}

// logOp appends op to the namespace log.
func (f *FS) logOp(op nsOp) {
	f.mu.Lock()
	f.log = append(f.log, op)
	f.mu.Unlock()
}

// toGrave moves the backing file at rel (relative to the backing root)
// into the graveyard and returns its name there.
func (f *FS) toGrave(rel string) (string, error) {
	f.mu.Lock()
	f.graveSeq++
	name := fmt.Sprintf("%08d", f.graveSeq)
	f.mu.Unlock()
	if err := os.Rename(filepath.Join(f.backing, rel), filepath.Join(f.grave, name)); err != nil {
		return "", err
	}
	return name, nil
}

// state returns the undo state of the file with FUSE inode number ino,
// creating it from fd (the state opens its own descriptor) if
// there is none yet.
func (f *FS) state(ino uint64, fd int) (*fileState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if st := f.files[ino]; st != nil {
		return st, nil
	}
	st, err := newFileState(fd)
	if err != nil {
		return nil, err
	}
	f.files[ino] = st
	return st, nil
}

type opKind int

const (
	opCreate opKind = iota // a regular file (or node) was created at rel
	opUnlink               // rel was unlinked: its file is grave
	opRename               // rel was renamed to rel2, replacing grave if set
	opMkdir                // directory rel was made
	opRmdir                // directory rel was removed (mode perm)
)

// nsOp is one logged namespace operation. Paths are relative to the
// backing root and valid at the time of the operation, so undoing the log
// newest first always finds them.
type nsOp struct {
	kind      opKind
	dir, dir2 uint64 // FUSE inode numbers of the directory (and rename's target directory)
	rel, rel2 string
	grave     string // graveyard name of the unlinked or replaced file
	perm      os.FileMode
}

func (op nsOp) undo(f *FS) error {
	p := filepath.Join(f.backing, op.rel)
	var err error
	switch op.kind {
	case opCreate:
		err = os.Remove(p)
	case opUnlink:
		err = os.Rename(filepath.Join(f.grave, op.grave), p)
	case opRename:
		err = os.Rename(filepath.Join(f.backing, op.rel2), p)
		if err == nil && op.grave != "" {
			err = os.Rename(filepath.Join(f.grave, op.grave), filepath.Join(f.backing, op.rel2))
		}
	case opMkdir:
		// Entries made by operations that are not logged (symlinks, hard
		// links) go with it.
		err = os.RemoveAll(p)
	case opRmdir:
		err = os.Mkdir(p, op.perm)
	}
	if err != nil {
		return fmt.Errorf("faultfs: undoing %v of %s: %w", op.kind, op.rel, err)
	}
	return nil
}

func (k opKind) String() string {
	return [...]string{"create", "unlink", "rename", "mkdir", "rmdir"}[k]
}

// fileState is one file's undo log: the durable contents of every page
// written since its last fsync, and its durable size.
type fileState struct {
	mu          sync.Mutex
	f           *os.File // own descriptor on the backing file
	durableSize int64
	// undo maps a page index to the page's durable contents (shorter than
	// PageSize where the durable file ends inside the page; nil for a page
	// wholly past the durable size).
	undo map[int64][]byte
}

// newFileState opens its own read-write descriptor on the file fd is open
// on (fd may be read-only; the file may be unlinked already).
func newFileState(fd int) (*fileState, error) {
	file, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", fd), os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("faultfs: reopening for the undo log: %w", err)
	}
	fi, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("faultfs: %w", err)
	}
	return &fileState{f: file, durableSize: fi.Size(), undo: map[int64][]byte{}}, nil
}

// save logs the durable contents of every page of [off, off+n) not logged
// yet. st.mu is held, and the caller changes the range only after save.
func (st *fileState) save(off, n int64) error {
	if n <= 0 {
		return nil
	}
	for p := off / PageSize; p <= (off+n-1)/PageSize; p++ {
		if _, ok := st.undo[p]; ok {
			continue
		}
		start := p * PageSize
		if start >= st.durableSize {
			st.undo[p] = nil
			continue
		}
		buf := make([]byte, min(PageSize, st.durableSize-start))
		k, err := st.f.ReadAt(buf, start)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("faultfs: saving page %d: %w", p, err)
		}
		buf = buf[:k]
		st.undo[p] = buf
	}
	return nil
}

// synced makes the file's current contents and size durable.
func (st *fileState) synced() error {
	fi, err := st.f.Stat()
	if err != nil {
		return fmt.Errorf("faultfs: %w", err)
	}
	st.durableSize = fi.Size()
	clear(st.undo)
	return nil
}

// rollBack restores the durable contents (in KeepRandom mode each page
// keeps its new contents with probability 1/2, in TearSectors mode each
// sector) and the durable size.
func (st *fileState) rollBack(mode CutMode, rng *rand.Rand) (kept, torn, dropped int, changed bool, err error) {
	fi, err := st.f.Stat()
	if err != nil {
		return 0, 0, 0, false, fmt.Errorf("faultfs: %w", err)
	}
	// Sorted, so that a seed makes the same choices.
	for _, p := range slices.Sorted(maps.Keys(st.undo)) {
		buf := st.undo[p]
		if buf == nil {
			continue // past the durable size: the truncate below drops it
		}
		unit := len(buf) // DropAll, KeepRandom: the page is one unit
		if mode == TearSectors {
			unit = SectorSize
		}
		restored, units := 0, 0
		for s := 0; s < len(buf); s += unit {
			units++
			if mode != DropAll && rng.IntN(2) == 0 {
				continue // the disk had written the new contents
			}
			e := min(s+unit, len(buf))
			if _, err := st.f.WriteAt(buf[s:e], p*PageSize+int64(s)); err != nil {
				return kept, torn, dropped, true, fmt.Errorf("faultfs: restoring page %d: %w", p, err)
			}
			restored++
		}
		switch restored {
		case 0:
			kept++
		case units:
			dropped++
		default:
			torn++
		}
	}
	if fi.Size() != st.durableSize || len(st.undo) > 0 {
		changed = true
	}
	if err := st.f.Truncate(st.durableSize); err != nil {
		return kept, torn, dropped, changed, fmt.Errorf("faultfs: restoring size: %w", err)
	}
	return kept, torn, dropped, changed, nil
}

func (st *fileState) close() {
	st.f.Close()
}
