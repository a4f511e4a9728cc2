package keyspace_test

import (
	"fmt"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// TestColdPages: once the segments' and the index's pages are reclaimed,
// ColdPages names the page a GET would fault on first (the index slot's,
// then, once that is read in, the record's), WaitResident reads them in
// without the lock, after which ColdPages finds nothing left and the GET
// answers the value; a key cached in the record cache needs no record
// page.
func TestColdPages(t *testing.T) {
	dir := t.TempDir()
	ks, _ := openKix(t, dir)
	const n = 2000
	key := func(i int) []byte { return []byte(fmt.Sprintf("cold:%05d", i)) }
	for base := 0; base < n; base += 100 {
		commit(t, ks, func(b *keyspace.Batch) {
			for i := base; i < base+100; i++ {
				b.Set(0, key(i), []byte(fmt.Sprintf("value-%05d", i)), 0)
			}
		})
	}
	ks.Close() // written back: clean pages the kernel may reclaim
	ks, _ = openKix(t, dir)
	defer ks.Close()
	ks.SetMemoryTiers(keyspace.MemoryTiers{IndexLock: 0, RecordCache: 0})
	ks.Lock()
	if err := ks.PageOutAll(); err != nil {
		ks.Unlock()
		t.Skipf("MADV_PAGEOUT: %v", err)
	}
	cold, slotThenRecord := 0, 0
	for i := 0; i < n; i += 97 {
		if i%2 == 1 {
			_ = ks.PageOutAll() // cold again (the index's pages only if clean: often not here)
		}
		pages, slot := ks.ColdPages(0, key(i), nil)
		for round := 0; len(pages) > 0 && round < 3; round++ {
			if slot && len(pages) != 1 {
				ks.Unlock()
				t.Fatalf("%s: the index slot's page comes alone, got %d pages", key(i), len(pages))
			}
			cold++
			ks.Unlock()
			keyspace.WaitResident(pages)
			ks.Lock()
			wasSlot := slot
			pages, slot = ks.ColdPages(0, key(i), pages[:0])
			if wasSlot && slot {
				ks.Unlock()
				t.Fatalf("%s: the index slot's page is still cold after warming it", key(i))
			}
			if wasSlot && len(pages) > 0 {
				slotThenRecord++ // the record's page, named once the slot is in
			}
		}
		if len(pages) > 0 {
			ks.Unlock()
			t.Fatalf("%s: pages still not resident after three rounds of warming", key(i))
		}
		v, ok, err := ks.Get(0, key(i))
		if err != nil || !ok || string(v) != fmt.Sprintf("value-%05d", i) {
			ks.Unlock()
			t.Fatalf("GET %s = %q %v %v", key(i), v, ok, err)
		}
	}
	ks.Unlock()
	if cold == 0 {
		t.Skip("no page was reclaimed (MADV_PAGEOUT did nothing here): the test proves nothing")
	}
	t.Logf("%d warming rounds for %d keys, %d of them the slot's page then the record's", cold, (n+96)/97, slotThenRecord)
}
