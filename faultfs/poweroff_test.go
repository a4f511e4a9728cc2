package faultfs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestPowerOffRefuses: after PowerOff every write, sync, create, open,
// read and rename fails with EIO and reaches no backing file; the
// unsynced write made before it is still in the backing file until Cut
// drops it, and the fresh mount after Cut takes requests again.
func TestPowerOffRefuses(t *testing.T) {
	f, backing, mnt := mountTest(t, Options{})
	p := filepath.Join(mnt, "a")
	writeFile(t, p, []byte("durable"), true)
	syncDir(t, mnt)
	h, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.WriteAt([]byte("D"), 0); err != nil {
		t.Fatal(err)
	}
	f.PowerOff()
	refused0 := f.Stats().Refused
	if _, err := h.WriteAt([]byte("E"), 1); !errors.Is(err, syscall.EIO) {
		t.Fatalf("write after PowerOff: %v, want EIO", err)
	}
	if err := h.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("fsync after PowerOff: %v, want EIO", err)
	}
	if _, err := os.ReadFile(p); !errors.Is(err, syscall.EIO) {
		t.Fatalf("open for reading after PowerOff: %v, want EIO", err)
	}
	if _, err := os.Create(filepath.Join(mnt, "b")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("create after PowerOff: %v, want EIO", err)
	}
	if err := os.Rename(p, filepath.Join(mnt, "c")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("rename after PowerOff: %v, want EIO", err)
	}
	if got := f.Stats().Refused - refused0; got < 5 {
		t.Fatalf("%d requests counted refused after PowerOff, want at least 5", got)
	}
	wantFile(t, filepath.Join(backing, "a"), []byte("Durable")) // the write before PowerOff, not the one after
	h.Close()
	cut(t, f, DropAll)
	wantFile(t, p, []byte("durable"))
	writeFile(t, filepath.Join(mnt, "b"), []byte("b"), true) // powered on again
}

// TestPowerOffRacingSyncs: writers on four files append a record and
// fsync it in a loop, with a sync latency of 1 ms, while the power goes
// off under them. After the cut each file holds exactly the records
// whose fsync succeeded: no write or sync in flight at the PowerOff
// slips through, and none that succeeded is lost. Nothing reaches the
// backing files once PowerOff has returned.
func TestPowerOffRacingSyncs(t *testing.T) {
	f, backing, mnt := mountTest(t, Options{SyncLatency: time.Millisecond})
	const writers = 4
	const rec = 64                 // bytes a record: several records share a page
	synced := make([]int, writers) // records acknowledged durable per file
	var wg sync.WaitGroup
	var mu sync.Mutex
	enough := make(chan struct{})
	var once sync.Once
	total := 0
	for w := 0; w < writers; w++ {
		p := filepath.Join(mnt, fmt.Sprint("f", w))
		writeFile(t, p, nil, true)
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			h, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Error(err)
				return
			}
			defer h.Close()
			for i := 0; ; i++ {
				buf := bytes.Repeat([]byte{byte('a' + w)}, rec)
				binary.LittleEndian.PutUint64(buf, uint64(i))
				if _, err := h.WriteAt(buf, int64(i*rec)); err != nil {
					return // the power is off
				}
				if err := h.Sync(); err != nil {
					return
				}
				mu.Lock()
				synced[w] = i + 1
				total++
				if total == 200 {
					once.Do(func() { close(enough) })
				}
				mu.Unlock()
			}
		}(w)
	}
	syncDir(t, mnt)
	<-enough
	f.PowerOff()
	backingNow := func() []string {
		var all []string
		for w := 0; w < writers; w++ {
			b, err := os.ReadFile(filepath.Join(backing, fmt.Sprint("f", w)))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, string(b))
		}
		return all
	}
	atPowerOff := backingNow()
	wg.Wait()
	for w, b := range backingNow() {
		if b != atPowerOff[w] {
			t.Fatalf("backing file %d changed after PowerOff returned: %d bytes, then %d", w, len(atPowerOff[w]), len(b))
		}
	}
	cs := cut(t, f, DropAll)
	if cs.DroppedPages == 0 && cs.Files == 0 {
		t.Logf("no writer had an unsynced write in flight at the PowerOff")
	}
	for w := 0; w < writers; w++ {
		got, err := os.ReadFile(filepath.Join(mnt, fmt.Sprint("f", w)))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != synced[w]*rec {
			t.Fatalf("file %d holds %d bytes after the cut: %d records, want the %d whose fsync succeeded", w, len(got), len(got)/rec, synced[w])
		}
		for i := 0; i < synced[w]; i++ {
			if n := binary.LittleEndian.Uint64(got[i*rec:]); n != uint64(i) {
				t.Fatalf("file %d record %d holds %d", w, i, n)
			}
		}
	}
	t.Logf("records durable per file: %v; %d requests refused", synced, f.Stats().Refused)
}

// TestAtSync: a hook that turns the power off at the third sync makes
// exactly that sync fail: the first two stay durable, the third write
// is dropped by the cut.
func TestAtSync(t *testing.T) {
	f, _, mnt := mountTest(t, Options{})
	p := filepath.Join(mnt, "a")
	writeFile(t, p, nil, true)
	syncDir(t, mnt)
	h, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	f.AtSync(3, f.PowerOff)
	for i, b := range []byte("xyz") {
		if _, err := h.WriteAt([]byte{b}, int64(i)); err != nil {
			t.Fatal(err)
		}
		err := h.Sync()
		switch {
		case i < 2 && err != nil:
			t.Fatalf("sync %d: %v", i+1, err)
		case i == 2 && !errors.Is(err, syscall.EIO):
			t.Fatalf("sync 3, at which the power went off: %v, want EIO", err)
		}
	}
	h.Close()
	cut(t, f, DropAll)
	wantFile(t, p, []byte("xy"))
}

// TestSyncLatency: a sync takes at least SyncLatency, and a PowerOff
// while it waits makes it fail (nothing it would have made durable is).
func TestSyncLatency(t *testing.T) {
	const latency = 300 * time.Millisecond
	f, _, mnt := mountTest(t, Options{SyncLatency: latency})
	p := filepath.Join(mnt, "a")
	writeFile(t, p, []byte("old"), true)
	syncDir(t, mnt)
	start := time.Now()
	writeFile(t, p, []byte("new"), true)
	if d := time.Since(start); d < latency {
		t.Fatalf("a write and fsync took %v, less than the sync latency %v", d, latency)
	}
	for try := 0; ; try++ {
		h, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		h.WriteAt([]byte("cut"), 0)
		arrived := make(chan time.Time, 1)
		f.AtSync(1, func() { arrived <- time.Now() })
		res := make(chan error, 1)
		go func() { res <- h.Sync() }()
		at := <-arrived
		f.PowerOff()
		late := time.Since(at) >= latency // the sync may have finished first
		err = <-res
		h.Close()
		if late && try < 3 {
			t.Logf("PowerOff came %v after the sync arrived, not within its latency: again", time.Since(at))
			cut(t, f, DropAll)
			continue
		}
		if !errors.Is(err, syscall.EIO) {
			t.Fatalf("fsync with the power going off during its latency: %v, want EIO", err)
		}
		cut(t, f, DropAll)
		wantFile(t, p, []byte("new"))
		return
	}
}
