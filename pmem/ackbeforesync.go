//go:build persimmon_ackbeforesync && unix

package pmem

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// A deliberately broken build, for the negative control of the power-cut
// test (e2e TestPowerCut/msync-ack-before-sync, which builds the server
// with the persimmon_ackbeforesync tag): an msync(MS_SYNC) of a range that
// does not start at the start of its mapping (a group commit's records:
// segments keep their header, and with it every commit word, in the
// first page) returns nil at once and the sync itself runs a moment
// later on a goroutine of its own. Region.Msync, and so Persist in
// ModeMsync, then returns before the records are durable, and the server
// acknowledges writes before their sync: the bug the power-cut test must
// catch. An msync from the start of a mapping (a header, a seal,
// clean-shutdown or cleaned word, a whole segment) first runs every
// deferred one, then its own, at once, so the syncs reach the disk in
// the order a correct build issues them and only the acknowledgements
// come early: the server still starts after any cut, and what the test
// finds is lost acknowledged writes. A kill -9 test cannot tell this
// build from a correct one (every sync happens); only a power cut in
// that moment can. Never build a server for use with this tag.

func init() {
	l := &lateSyncer{sync: msyncPages, wake: make(chan struct{}, 1)}
	go l.run()
	msyncPages = func(b []byte, flags int) error {
		if flags&unix.MS_SYNC == 0 || len(b) == 0 {
			return l.sync(b, flags)
		}
		if startsMapping(b) {
			return l.now(b)
		}
		l.add(b)
		return nil
	}
}

// startsMapping reports whether b starts where a mapping of this process
// starts (/proc/self/maps), as a Region's first page does. The address
// comes from %p, so the package needs no unsafe code.
func startsMapping(b []byte) bool {
	addr, err := strconv.ParseUint(fmt.Sprintf("%p", &b[0])[2:], 16, 64)
	if err != nil {
		return true // cannot tell: sync at once
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return true
	}
	for line := range bytes.Lines(maps) {
		dash := bytes.IndexByte(line, '-')
		if dash < 0 {
			continue
		}
		if start, err := strconv.ParseUint(string(line[:dash]), 16, 64); err == nil && start == addr {
			return true
		}
	}
	return false
}

// lateSyncer runs the msyncs the callers were told had finished, in the
// order they were asked for: one goroutine does them one after another
// (an msync blocks its thread, and a goroutine each would take a thread
// each), and a sync at once runs the deferred ones first.
type lateSyncer struct {
	sync    func([]byte, int) error
	wake    chan struct{}
	syncMu  sync.Mutex // held while running syncs, so that they run in order
	mu      sync.Mutex // guards pending
	pending [][]byte
}

// add queues b's pages for the syncer; a range already queued is not
// queued twice.
func (l *lateSyncer) add(b []byte) {
	l.mu.Lock()
	dup := false
	for _, p := range l.pending {
		if &p[0] == &b[0] && len(p) == len(b) {
			dup = true
			break
		}
	}
	if !dup {
		l.pending = append(l.pending, b)
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// now runs every deferred sync, then b's, and returns b's error.
func (l *lateSyncer) now(b []byte) error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.runPending()
	return l.sync(b, unix.MS_SYNC)
}

// run syncs what is queued whenever something is.
func (l *lateSyncer) run() {
	for range l.wake {
		l.syncMu.Lock()
		l.runPending()
		l.syncMu.Unlock()
	}
}

// runPending runs the deferred syncs; l.syncMu is held. Errors are
// dropped: the callers were told of success long ago (which is the bug).
// A range whose Region was closed meanwhile is no longer mapped, and
// msync of it fails with ENOMEM without touching anything.
func (l *lateSyncer) runPending() {
	l.mu.Lock()
	todo := l.pending
	l.pending = nil
	l.mu.Unlock()
	for _, b := range todo {
		_ = l.sync(b, unix.MS_SYNC)
	}
}
