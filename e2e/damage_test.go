package e2e

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Damage is never silent (issue 10, section 4): each test damages a data
// directory the way an operator or a disk might, then starts the real
// server binary on it and runs the real persimmon-check.

var (
	checkOnce sync.Once
	checkBin  string
	checkErr  error
)

// persimmonCheck runs the persimmon-check binary (built once) and returns
// its output and exit code.
func persimmonCheck(t *testing.T, args ...string) (string, int) {
	t.Helper()
	checkOnce.Do(func() {
		checkBin = filepath.Join(filepath.Dir(serverBin), "persimmon-check")
		out, err := exec.Command("go", "build", "-o", checkBin, "../cmd/persimmon-check").CombinedOutput()
		if err != nil {
			checkErr = fmt.Errorf("building persimmon-check: %v\n%s", err, out)
		}
	})
	if checkErr != nil {
		t.Fatal(checkErr)
	}
	out, err := exec.Command(checkBin, args...).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// startFails starts the server binary on dir and requires it to exit with
// an error before it accepts connections; it returns the server's output.
func startFails(t *testing.T, dir string, args ...string) string {
	t.Helper()
	all := append([]string{"--port", fmt.Sprint(freePort(t)), "--dir", dir}, args...)
	cmd := exec.Command(serverBin, all...)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	var out syncBuffer
	ready := make(chan struct{})
	eof := make(chan struct{})
	go func() {
		defer close(eof)
		sc := bufio.NewScanner(pr)
		signalled := false
		for sc.Scan() {
			fmt.Fprintln(&out, sc.Text())
			if !signalled && strings.Contains(sc.Text(), "Ready to accept connections") {
				signalled = true
				close(ready)
			}
		}
	}()
	done := make(chan error, 1)
	go func() { <-eof; done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("server exited 0 on a damaged directory\n%s", out.String())
		}
	case <-ready:
		cmd.Process.Kill()
		<-done
		t.Fatalf("server accepted connections on a damaged directory\n%s", out.String())
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("server still running 60s after start on a damaged directory (it should refuse)\n%s", out.String())
	}
	return out.String()
}

func segName(id int) string { return fmt.Sprintf("seg-%016x.arena", id) }

// fillKeys writes n keys prefix:<i> of size bytes each, pipelined.
func fillKeys(t *testing.T, s *server, prefix string, n, size int) {
	t.Helper()
	c := s.client()
	val := strings.Repeat("f", size)
	for i := 0; i < n; i += 100 {
		p := c.Pipeline()
		for j := i; j < min(i+100, n); j++ {
			p.Set(ctx, fmt.Sprintf("%s:%d", prefix, j), val, 0)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMissingMiddleSegment is the scenario: SET victim, fill, DEL
// victim, fill, SIGTERM, move the second segment away. Before the segment
// chain was checked, the server started and GET victim returned the
// deleted value, and persimmon-check verify exited 0.
func TestMissingMiddleSegment(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--segment-size", "1mb")
	c := s.client()
	if err := c.Set(ctx, "victim", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	fillKeys(t, s, "a", 1200, 1000) // ~1.2 MB: the DEL lands in segment 2
	if err := c.Del(ctx, "victim").Err(); err != nil {
		t.Fatal(err)
	}
	fillKeys(t, s, "b", 1200, 1000)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, segName(3))); err != nil {
		t.Fatalf("want 3 segments: %v", err)
	}
	if err := os.Rename(filepath.Join(dir, segName(2)), filepath.Join(t.TempDir(), segName(2))); err != nil {
		t.Fatal(err)
	}
	out := startFails(t, dir, "--segment-size", "1mb")
	for _, want := range []string{segName(1), segName(2), segName(3), "missing"} {
		if !strings.Contains(out, want) {
			t.Errorf("start-up output does not mention %q:\n%s", want, out)
		}
	}
	vout, code := persimmonCheck(t, "verify", dir)
	if code != 1 || !strings.Contains(vout, "missing") {
		t.Fatalf("persimmon-check verify with segment 2 missing: exit %d\n%s", code, vout)
	}
	t.Logf("server:\n%s", out)
}

// TestCleanShutdownFlippedByte: after SIGTERM (a clean shutdown) one
// flipped byte within the last 64 KiB of the log. Before the
// clean-shutdown mark, the damaged record and every acknowledged SET after
// it were cut as a torn tail and the server started normally.
func TestCleanShutdownFlippedByte(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	fillKeys(t, s, "k", 20000, 100)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, segName(1))
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	img, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	end := int64(len(img))
	for end > 0 && img[end-1] == 0 {
		end--
	}
	off := end - 30_000 // about 200 SETs before the end
	if _, err := f.WriteAt([]byte{img[off] ^ 0x04}, off); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := startFails(t, dir)
	if !strings.Contains(out, "corruption") || !strings.Contains(out, segName(1)) || !strings.Contains(out, "clean shutdown") {
		t.Fatalf("start-up output does not report corruption before the clean-shutdown mark:\n%s", out)
	}
	if vout, code := persimmonCheck(t, "verify", dir); code != 1 {
		t.Fatalf("persimmon-check verify: exit %d\n%s", code, vout)
	}
	t.Logf("server:\n%s", out)
}

// TestTruncatedNewestSegment: the newest segment truncated to 4096 bytes
// (before: deleted at start-up without a word, its keys gone) or to
// 500,000 bytes (before: refused with misleading messages, and repair
// failed the same way). Now start-up refuses, naming the file and both
// sizes, and repair keeps the records before the truncation.
func TestTruncatedNewestSegment(t *testing.T) {
	for _, size := range []int64{4096, 500_000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			dir := t.TempDir()
			s := startServer(t, dir, "--segment-size", "1mb")
			fillKeys(t, s, "k", 1500, 1000) // segment 2 holds ~500 keys
			if err := s.stop(); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, segName(2))
			if _, err := os.Stat(filepath.Join(dir, segName(3))); err == nil {
				ents, _ := os.ReadDir(dir)
				t.Fatalf("the test wants segment 2 to be the newest: %v", ents)
			}
			if err := os.Truncate(p, size); err != nil {
				t.Fatal(err)
			}
			out := startFails(t, dir, "--segment-size", "1mb")
			if !strings.Contains(out, p) || !strings.Contains(out, fmt.Sprintf("%d bytes, its header says %d", size, 1<<20)) {
				t.Fatalf("start-up output does not name the short file and its sizes:\n%s", out)
			}
			if fi, err := os.Stat(p); err != nil || fi.Size() != size {
				t.Fatalf("the short file was changed or removed by the failed start: %v", err)
			}
			rout, code := persimmonCheck(t, "repair", dir)
			if code != 0 {
				t.Fatalf("repair: exit %d\n%s", code, rout)
			}
			s = startServer(t, dir, "--segment-size", "1mb")
			c := s.client()
			n, err := c.DBSize(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			// The keys are a prefix of the writes, and every key written
			// into segment 1 or the kept part of segment 2 is there.
			for i := 0; i < int(n); i++ {
				if ok, err := c.Exists(ctx, fmt.Sprintf("k:%d", i)).Result(); err != nil || ok != 1 {
					t.Fatalf("%d keys after repair, but k:%d is missing", n, i)
				}
			}
			perSeg := int64(1<<20) / 1040
			minKeys := perSeg - 50 + (size-4096)/1040 - 2
			if n < minKeys || n >= 1500 {
				t.Fatalf("after repair %d keys, want at least %d (the records before the truncation)", n, minKeys)
			}
			t.Logf("truncated to %d: %d keys kept; repair:\n%s", size, n, rout)
		})
	}
}

// TestShutdownMarkClearedByWrites: after a clean shutdown, a restart and
// a write, a kill -9 is an ordinary crash again: a torn last record is cut
// and the server starts with everything before it. (The mark itself is
// cleared on disk by that write: recovery's TestCleanShutdownDamageIsCorruption
// reads the file; a stale mark would also be passed over, see
// wal.TestStaleShutdownMark.)
func TestShutdownMarkClearedByWrites(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	fillKeys(t, s, "k", 1000, 100)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	s = startServer(t, dir)
	if err := s.client().Set(ctx, "last", strings.Repeat("z", 500), 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.kill()
	p := filepath.Join(dir, segName(1))
	img, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	end := int64(len(img))
	for end > 0 && img[end-1] == 0 {
		end--
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{img[end-100] ^ 0x01}, end-100); err != nil { // inside "last"
		t.Fatal(err)
	}
	f.Close()
	s = startServer(t, dir)
	c := s.client()
	if n, err := c.Exists(ctx, "last").Result(); err != nil || n != 0 {
		t.Fatalf("the torn last record was not cut: exists=%d %v", n, err)
	}
	if n, err := c.DBSize(ctx).Result(); err != nil || n != 1000 {
		t.Fatalf("DBSIZE %d (%v) after cutting the torn record, want 1000\n%s", n, err, s.log.String())
	}
}

// TestIndexSlotNamesMissingSegment: with the key index on and its
// checkpoint covering the whole log, the slots naming segment 1 are made
// to name a segment that does not exist (as a damaged index file, or a
// segment lost behind the server's back, would). A key read through such
// a slot is answered with an error naming the damage and the server log
// says so, instead of the key reading as missing (a slot KeyAt could not
// read was skipped as a mismatch) or a panic (kixEntry panicked on a
// location it could not decode); the server keeps serving, other keys
// are read, and writing the key replaces it.
func TestIndexSlotNamesMissingSegment(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--segment-size", "1mb", "--key-index", "yes")
	c := s.client()
	if err := c.Set(ctx, "victim", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	fillKeys(t, s, "a", 2400, 1000) // ~2.4 MB: three segments
	if err := c.Set(ctx, "late", "y", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	damaged := misnameSegment1Slots(t, dir)
	s = startServer(t, dir, "--segment-size", "1mb", "--key-index", "yes")
	c = s.client()
	_, err := c.Get(ctx, "victim").Result()
	if err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("GET of a key whose slot names a missing segment: %v, want the damage error", err)
	}
	if v, err := c.Get(ctx, "late").Result(); err != nil || v != "y" {
		t.Fatalf("GET late: %q %v", v, err)
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("the server stopped serving: %v\n%s", err, s.log.String())
	}
	if !strings.Contains(s.log.String(), "DAMAGE") {
		t.Fatalf("the server log does not report the damage:\n%s", s.log.String())
	}
	if err := c.Set(ctx, "victim", "z", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "victim").Result(); err != nil || v != "z" {
		t.Fatalf("GET victim after SET: %q %v", v, err)
	}
	t.Logf("%d slots damaged; server:\n%s", damaged, s.log.String())
}

// TestScrubFindsDamageInTrustedSegment: one flipped byte inside a record
// of segment 1 after a clean shutdown with the key index on. Start-up
// re-attaches the index and does not read segment 1 (its checkpoint
// covers it), so before the scrub the damage went unseen until
// persimmon-check verify. Now the server starts, verifies the skipped
// segments in the background and reports the damage in its log and in
// INFO persistence (scrub_damaged_segments), naming the segment.
func TestScrubFindsDamageInTrustedSegment(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--segment-size", "1mb", "--key-index", "yes")
	fillKeys(t, s, "a", 2400, 1000) // three segments
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, segName(1))
	img, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	off := 4096 + 300_000 // inside some record's value ('f' bytes)
	if img[off] != 'f' {
		t.Fatalf("byte %d of segment 1 is %q, not a value byte", off, img[off])
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{'g'}, int64(off)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s = startServer(t, dir, "--segment-size", "1mb", "--key-index", "yes")
	if !strings.Contains(s.log.String(), "segments skipped") || strings.Contains(s.log.String(), "0 segments skipped") {
		t.Fatalf("the restart did not skip segments through the index:\n%s", s.log.String())
	}
	c := s.client()
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := c.Info(ctx, "persistence").Result()
		if err != nil {
			t.Fatal(err)
		}
		if infoField(info, "scrub_damaged_segments") == "1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no damage reported 30 s after start: scrubbed_segments %s, scrub_damaged_segments %s\n%s", infoField(info, "scrubbed_segments"), infoField(info, "scrub_damaged_segments"), s.log.String())
		}
		time.Sleep(20 * time.Millisecond) // polling INFO until the deadline
	}
	if l := s.log.String(); !strings.Contains(l, "DAMAGE: segment 1") || !strings.Contains(l, segName(1)) {
		t.Fatalf("the log does not name the damaged segment:\n%s", l)
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
}

// misnameSegment1Slots rewrites the stopped server's key index file in dir
// so that every live slot naming segment 1 names segment 0x7777, which
// does not exist (a damaged index file, or a segment lost behind the
// server's back).
func misnameSegment1Slots(t *testing.T, dir string) (damaged int) {
	t.Helper()
	path := filepath.Join(dir, "keyindex")
	img, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for off := 4096; off+8 <= len(img); off += 8 {
		w := binary.LittleEndian.Uint64(img[off:])
		if w&(1<<32-1) != 0 && w>>32&0xffff == 1 { // a live slot of segment 1
			binary.LittleEndian.PutUint64(img[off:], w&^(0xffff<<32)|0x7777<<32)
			damaged++
		}
	}
	if damaged == 0 {
		t.Fatal("no slot names segment 1")
	}
	if err := os.WriteFile(path, img, 0o644); err != nil {
		t.Fatal(err)
	}
	return damaged
}

// TestDamagedKeyRenameMoveCopy: a key whose index slot names a missing
// segment (damaged as in TestIndexSlotNamesMissingSegment) is the source
// of RENAME, RENAMENX, MOVE and COPY. Each answers the damage error and
// changes nothing: the source is kept (still answering the damage) and
// the destination keeps what it held. Before, the copy of the unreadable
// value wrote nothing and the source's delete went through, so RENAME
// and MOVE lost the key.
func TestDamagedKeyRenameMoveCopy(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--segment-size", "1mb", "--key-index", "yes")
	c := s.client()
	if err := c.Set(ctx, "victim", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	fillKeys(t, s, "a", 2400, 1000) // ~2.4 MB: three segments
	if err := c.Set(ctx, "dst", "kept", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	misnameSegment1Slots(t, dir)
	s = startServer(t, dir, "--segment-size", "1mb", "--key-index", "yes")
	c = s.client()
	isDamage := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "damaged") {
			t.Fatalf("%s of the damaged key: %v, want the damage error", what, err)
		}
	}
	isDamage("RENAME", c.Rename(ctx, "victim", "renamed").Err())
	isDamage("RENAME over an existing key", c.Rename(ctx, "victim", "dst").Err())
	isDamage("RENAMENX", c.RenameNX(ctx, "victim", "renamed").Err())
	isDamage("MOVE", c.Move(ctx, "victim", 1).Err())
	isDamage("COPY", c.Copy(ctx, "victim", "copied", 0, false).Err())
	isDamage("COPY REPLACE", c.Copy(ctx, "victim", "dst", 0, true).Err())
	isDamage("COPY to db 2", c.Copy(ctx, "victim", "copied", 2, false).Err())
	_, err := c.Get(ctx, "victim").Result()
	isDamage("GET after them", err)
	if n, err := c.Exists(ctx, "victim").Result(); err != nil || n != 1 {
		t.Fatalf("EXISTS victim after the refused commands: %d %v, want 1", n, err)
	}
	if n, err := c.Exists(ctx, "renamed", "copied").Result(); err != nil || n != 0 {
		t.Fatalf("EXISTS renamed copied: %d %v, want 0", n, err)
	}
	if v, err := c.Get(ctx, "dst").Result(); err != nil || v != "kept" {
		t.Fatalf("GET dst: %q %v, want kept", v, err)
	}
	for _, db := range []int{1, 2} {
		c2 := redis.NewClient(&redis.Options{Addr: s.Addr, DB: db, MaxRetries: -1, DisableIdentity: true})
		defer c2.Close()
		if n, err := c2.Exists(ctx, "victim", "copied").Result(); err != nil || n != 0 {
			t.Fatalf("db %d: EXISTS victim copied: %d %v, want 0", db, n, err)
		}
	}
	// The key is still there after a restart, and writing it replaces it.
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	s = startServer(t, dir, "--segment-size", "1mb", "--key-index", "yes")
	c = s.client()
	_, err = c.Get(ctx, "victim").Result()
	isDamage("GET after a restart", err)
	if err := c.Set(ctx, "victim", "z", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Rename(ctx, "victim", "renamed").Err(); err != nil {
		t.Fatalf("RENAME after SET: %v", err)
	}
	if v, err := c.Get(ctx, "renamed").Result(); err != nil || v != "z" {
		t.Fatalf("GET renamed: %q %v", v, err)
	}
}
