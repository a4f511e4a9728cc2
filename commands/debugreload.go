package commands

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/rdb"
	"github.com/persimmon-db/persimmon/recovery"
)

// DEBUG RELOAD. Redis saves an RDB, empties the dataset and loads the RDB
// back, which proves the dataset survives a save and a load. Persimmon's
// dataset is the arena, so the same proof is a recovery: with the keyspace
// lock held (no write in between), the data directory's files are copied
// as they are in the page cache, which is what a crash at this instant
// would leave, the copy is recovered into a second keyspace, and every
// key's value (as its DUMP payload) and expiry must match the live one.
// The live keyspace is not replaced: it is the same data, and swapping it
// under the connections would gain nothing. A mismatch replies Redis's
// load error and logs the first difference.
//
// It costs a copy of the data directory: meant for tests, like Redis's.
//
// DEBUG LOADAOF, Redis's reload of its append-only file, is the same
// proof: the log is Persimmon's append-only file. (Redis exits when its
// AOF does not load; here the command fails and the server goes on.)
func debugReload(c *Client, name string) {
	start := time.Now()
	dir, _ := c.Srv.ConfigValue("dir")
	segSize, _ := c.Srv.ConfigValue("segment-size")
	seg, _ := strconv.ParseInt(segSize, 10, 64)
	keys, err := reloadCheck(c.KS, dir, seg)
	if err != nil {
		c.Srv.Logf("DEBUG %s: %v", name, err)
		if name == "LOADAOF" {
			c.WriteError("ERR Error trying to load the AOF: the keyspace recovered from a copy of the arena differs from the live one (see the server log)")
		} else {
			c.WriteError("ERR Error trying to load the RDB dump")
		}
		return
	}
	c.Srv.Logf("DEBUG %s: the keyspace recovered from a copy of the arena matches the live one (%d keys, %v)", name, keys, time.Since(start).Round(time.Millisecond))
	c.WriteOK()
}

// reloadCheck recovers a copy of dir and compares it with ks (whose lock
// the caller holds); it returns the number of keys compared.
func reloadCheck(ks *keyspace.Keyspace, dir string, segSize int64) (int, error) {
	tmp, err := os.MkdirTemp("", "persimmon-reload-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || filepath.Ext(e.Name()) == ".pid" {
			continue
		}
		if err := copyFile(filepath.Join(dir, e.Name()), filepath.Join(tmp, e.Name())); err != nil {
			return 0, err
		}
	}
	copyKS, _, err := recovery.Open(recovery.Options{Dir: tmp, Mode: pmem.ModeNone, SegmentSize: segSize})
	if err != nil {
		return 0, fmt.Errorf("recovering a copy of %s: %w", dir, err)
	}
	defer copyKS.Close()
	copyKS.Lock()
	defer copyKS.Unlock()
	n := 0
	for db := 0; db < keyspace.NumDBs; db++ {
		var keys []string
		ks.Keys(db, func(k string) { keys = append(keys, k) })
		copyCount := 0
		copyKS.Keys(db, func(string) { copyCount++ })
		if copyCount != len(keys) {
			return n, fmt.Errorf("db %d: %d keys live, %d recovered", db, len(keys), copyCount)
		}
		for _, k := range keys {
			a, err := dumpBytes(ks, db, []byte(k))
			if err != nil {
				return n, err
			}
			b, err := dumpBytes(copyKS, db, []byte(k))
			if err != nil {
				return n, fmt.Errorf("db %d key %q recovered: %w", db, k, err)
			}
			ea, _ := ks.ExpireAt(db, []byte(k))
			eb, _ := copyKS.ExpireAt(db, []byte(k))
			if !bytes.Equal(a, b) || ea != eb {
				return n, fmt.Errorf("db %d key %q: the recovered value or expiry differs", db, k)
			}
			n++
		}
	}
	return n, nil
}

func dumpBytes(ks *keyspace.Keyspace, db int, key []byte) ([]byte, error) {
	v, ok, err := dumpValue(ks, db, key)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("missing")
	}
	return rdb.Dump(&v)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
