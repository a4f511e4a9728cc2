//go:build persimmon_ackbeforesync && unix

package pmem

import (
	"sync"

	"golang.org/x/sys/unix"
)

// A deliberately broken build, for the negative control of the power-cut
// test (e2e TestPowerCut/msync-ack-before-sync, which builds the server
// with the persimmon_ackbeforesync tag): every msync(MS_SYNC) returns nil
// at once and the sync itself runs afterwards on a goroutine of its own.
// Region.Msync, and so Persist in ModeMsync, then returns before the range
// is durable, and the server acknowledges writes before their sync, the
// bug the power-cut test must catch. The syncs still happen, a moment
// later and in order, so a kill -9 test cannot tell this build from a
// correct one; only a power cut in that moment can. Never build a server
// for use with this tag.

func init() {
	realSync := msyncPages
	late := &lateSyncer{sync: realSync, wake: make(chan struct{}, 1)}
	go late.run()
	msyncPages = func(b []byte, flags int) error {
		if flags&unix.MS_SYNC == 0 || len(b) == 0 {
			return realSync(b, flags)
		}
		late.add(b)
		return nil
	}
}

// lateSyncer runs the msyncs the callers were told had finished, one
// goroutine doing them one after another (an msync blocks its thread, and
// a goroutine each would take a thread each).
type lateSyncer struct {
	sync    func([]byte, int) error
	wake    chan struct{}
	mu      sync.Mutex
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

// run syncs what is queued whenever something is. Errors are dropped: the
// caller was told of success long ago (which is the bug). A range whose
// Region was closed meanwhile is no longer mapped, and msync of it fails
// with ENOMEM without touching anything.
func (l *lateSyncer) run() {
	for range l.wake {
		l.mu.Lock()
		todo := l.pending
		l.pending = nil
		l.mu.Unlock()
		for _, b := range todo {
			_ = l.sync(b, unix.MS_SYNC)
		}
	}
}
