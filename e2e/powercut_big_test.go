package e2e

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/persimmon-db/persimmon/faultfs"
	"github.com/redis/go-redis/v9"
)

// bigCutValue is the value version ver of big key k: size bytes (1-3 MiB,
// over wal.DirectMin, so the record is written with pwritev) that name
// the key and the version throughout.
func bigCutValue(k string, ver int) []byte {
	size := 1<<20 + (len(k)*7919+ver*104729)%(2<<20)
	unit := []byte(fmt.Sprintf("%s@%d;", k, ver))
	return bytes.Repeat(unit, size/len(unit)+1)[:size]
}

// TestPowerCutBigValues cuts the power (faultfs: power off, kill, then in
// turn drop every unsynced page, keep a random half, tear sectors) under
// a server in msync mode while two writers overwrite big values (1-3 MiB: records the
// wal writes with pwritev, not through the mapping) and one writes small
// keys between them, with 1 MiB segments so big records get segments of
// their own and seal others. After each cut the server must start, and
// every acknowledged write must read back whole: the acknowledged version
// or the one after it (sent, maybe landed, not acknowledged), never a
// torn or older value.
//
// Mutation check (12-02): with msync mode treating a big record as pmem
// mode does (flushed offset moved past it, so no msync covers it), round
// 4 of a run read an older version of an acknowledged key.
func TestPowerCutBigValues(t *testing.T) {
	seed := crashSeed(t)
	rig := newPowerCutRig(t, seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	const bigKeys = 4
	acked := map[string]int{} // big key -> last acknowledged version
	small := map[string]int{} // small key -> last acknowledged value
	var mu sync.Mutex
	cuts := 6
	var lostPages int
	for round := 0; round <= cuts; round++ {
		s, err := launchServer(t, rig.dir, "--durability", "msync", "--segment-size", "1mb")
		if err != nil {
			t.Fatalf("round %d: the server does not start after a power cut: %v", round, err)
		}
		c := s.client()
		mu.Lock()
		for k, ver := range acked {
			got, err := c.Get(ctx, k).Bytes()
			if err != nil {
				t.Fatalf("round %d: GET %s (acknowledged version %d): %v", round, k, ver, err)
			}
			switch {
			case bytes.Equal(got, bigCutValue(k, ver)):
			case bytes.Equal(got, bigCutValue(k, ver+1)):
				acked[k] = ver + 1
			default:
				head := got[:min(len(got), 32)]
				t.Fatalf("round %d: %s holds %d bytes starting %q, not version %d (%d bytes) or %d", round, k, len(got), head, ver, len(bigCutValue(k, ver)), ver+1)
			}
		}
		for k, v := range small {
			got, err := c.Get(ctx, k).Int()
			if err != nil || (got != v && got != v+1) {
				t.Fatalf("round %d: GET %s = %d (%v), acknowledged %d", round, k, got, err, v)
			}
			small[k] = got
		}
		mu.Unlock()
		if round == cuts {
			s.kill()
			break
		}
		target := 3 + rng.IntN(6) // big values acknowledged before the kill
		var wg sync.WaitGroup
		enough := make(chan struct{})
		var once sync.Once
		bigDone := 0
		for w := 0; w < 2; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				wc := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DisableIdentity: true, PoolSize: 1, ReadTimeout: time.Minute, WriteTimeout: time.Minute})
				defer wc.Close()
				for i := 0; ; i++ {
					k := fmt.Sprintf("big:%d", (w+2*i)%bigKeys)
					mu.Lock()
					ver := acked[k] + 1
					mu.Unlock()
					if err := wc.Set(ctx, k, bigCutValue(k, ver), 0).Err(); err != nil {
						return // killed
					}
					mu.Lock()
					// The other writer may have acknowledged a version of
					// k meanwhile; keep the highest (a GET after the cut
					// reads the last one written).
					if ver > acked[k] {
						acked[k] = ver
					}
					bigDone++
					if bigDone >= target {
						once.Do(func() { close(enough) })
					}
					mu.Unlock()
				}
			}(w)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			wc := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DisableIdentity: true, PoolSize: 1})
			defer wc.Close()
			for i := 0; ; i++ {
				k := fmt.Sprintf("small:%d", i%16)
				mu.Lock()
				v := small[k] + 1
				mu.Unlock()
				if err := wc.Set(ctx, k, v, 0).Err(); err != nil {
					return
				}
				mu.Lock()
				small[k] = v
				mu.Unlock()
			}
		}()
		select {
		case <-enough:
		case <-time.After(2 * time.Minute):
			t.Fatalf("round %d: %d of %d big values acknowledged in 2 minutes", round, bigDone, target)
		}
		// The kill lands at a random point of the writes that follow
		// (reading a value, writing its record, syncing it), not right
		// after an acknowledgement.
		time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond)
		rig.fs.PowerOff() // then the kill: see faultfs.FS.Cut
		s.kill()
		wg.Wait()
		cs, err := rig.fs.Cut([]faultfs.CutMode{faultfs.DropAll, faultfs.KeepRandom, faultfs.TearSectors}[round%3])
		if err != nil {
			t.Fatalf("round %d: cut: %v", round, err)
		}
		t.Logf("round %d: %d big values acknowledged (%d keys), cut dropped %d pages, kept %d, tore %d", round, bigDone, len(acked), cs.DroppedPages, cs.KeptPages, cs.TornPages)
		lostPages += cs.DroppedPages + cs.KeptPages + cs.TornPages
	}
	if lostPages == 0 {
		t.Fatalf("no cut found an unsynced page: the cuts tested nothing")
	}
}
