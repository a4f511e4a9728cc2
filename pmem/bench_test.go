//go:build unix

package pmem

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkPersist measures one store-then-Persist of a record of each
// size in the pmem and msync modes. Each iteration dirties every cache line
// of its record (so there is something to write back) at an offset that
// walks through a 16 MiB region, whose blocks are written and synced before
// timing starts so that extent conversion is not measured.
func BenchmarkPersist(b *testing.B) {
	const regionSize = 16 << 20
	for _, mode := range []Mode{ModePmem, ModeMsync} {
		b.Run(mode.String(), func(b *testing.B) {
			r := mustMap(b, filepath.Join(b.TempDir(), "seg"), regionSize, mode)
			defer mustClose(b, r)
			data := r.Bytes()
			for i := range data {
				data[i] = 1
			}
			if err := r.Msync(0, regionSize); err != nil {
				b.Fatal(err)
			}
			for _, size := range []int64{64, 4 << 10, 64 << 10} {
				b.Run(sizeName(size), func(b *testing.B) {
					b.SetBytes(size)
					off := int64(0)
					for i := 0; b.Loop(); i++ {
						for j := off; j < off+size; j += CacheLineSize {
							data[j] = byte(i)
						}
						if err := r.Persist(off, size); err != nil {
							b.Fatal(err)
						}
						off += size
						if off+size > regionSize {
							off = 0
						}
					}
				})
			}
		})
	}
}

func sizeName(n int64) string {
	switch {
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	default:
		return fmt.Sprintf("%dB", n)
	}
}
