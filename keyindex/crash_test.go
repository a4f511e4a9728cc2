package keyindex

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/persimmon-db/persimmon/pmem"
)

// The crash test runs the index in a child process (this test binary,
// re-executed) that writes a log file and stages, publishes and
// checkpoints as the keyspace does, and kills it with SIGKILL at a chosen
// stage of a growth or a checkpoint, or at a random moment. The parent
// then opens what is left, replays the log after the checkpoint found and
// compares the index with the whole log.

const crashEnv = "KEYINDEX_CRASH_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashEnv); dir != "" {
		crashChild(dir, os.Getenv("KEYINDEX_CRASH_STAGE"))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// crashChild writes records for ever, staging each, every 250 records
// takes a growth step (the keyspace's grower: a migration copied in steps,
// checkpoints landing in between), and every 3000 records fsyncs the log
// and checkpoints.
// At stage it prints "AT stage" and waits to be killed.
func crashChild(dir, stage string) {
	f, err := os.OpenFile(filepath.Join(dir, "log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		panic(err)
	}
	l := newMemLog()
	o := l.opts()
	o.Mode = pmem.ModeMsync
	seen := 0
	o.testHook = func(s string) {
		if s == stage {
			seen++
		}
		if s == stage && seen == 3 { // the third: a table with history
			fmt.Println("AT", s)
			time.Sleep(time.Minute)
		}
	}
	ix, _, _, err := Open(filepath.Join(dir, "idx"), o)
	if err != nil {
		panic(err)
	}
	fmt.Println("READY")
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	written := 4096
	for keys := 2000; ; keys += 50 {
		k := fmt.Sprintf("key:%d", r.IntN(keys))
		loc, lsn := l.add(k, r.IntN(5) == 0)
		if _, err := f.Write(l.buf[written:]); err != nil {
			panic(err)
		}
		written = len(l.buf)
		if err := ix.Stage([]byte(k), loc, false); err != nil {
			panic(err)
		}
		if lsn%250 == 0 { // the keyspace's grower, between checkpoints
			phase, err := ix.GrowStep(2048) // faster than the inserts fill the table: the migration ends by steps
			if err != nil {
				panic(err)
			}
			if phase == GrowNeedsPersist {
				j := ix.BeginGrowPersist()
				if err := ix.EndGrowPersist(j, j.Run()); err != nil {
					panic(err)
				}
			}
		}
		if lsn%3000 == 0 {
			if err := f.Sync(); err != nil { // the records up to lsn are durable
				panic(err)
			}
			if err := ix.Checkpoint(Checkpoint{LSN: lsn, Seg: 1, Off: l.recOff(lsn)}); err != nil {
				panic(err)
			}
		}
	}
}

// recOff is the offset of the record after LSN lsn.
func (l *memLog) recOff(lsn uint64) uint64 {
	if int(lsn) < len(l.recs) {
		return l.offs[lsn]
	}
	return uint64(len(l.buf))
}

func TestCrashKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	stages := []string{"grow:started", "grow:step", "grow:persisted", "grow:built", "grow:renamed", "ckpt:applying", "ckpt:pages", "ckpt:block", "random", "random"}
	for _, stage := range stages {
		t.Run(stage, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), crashEnv+"="+dir, "KEYINDEX_CRASH_STAGE="+stage)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			lines := bufio.NewScanner(out)
			if !lines.Scan() || lines.Text() != "READY" {
				t.Fatalf("child: %q", lines.Text())
			}
			if stage == "random" {
				time.Sleep(time.Duration(200+rand.IntN(600)) * time.Millisecond)
			} else {
				if !lines.Scan() || !strings.HasPrefix(lines.Text(), "AT ") {
					t.Fatalf("child ended before %s: %q", stage, lines.Text())
				}
			}
			if err := cmd.Process.Kill(); err != nil { // SIGKILL
				t.Fatal(err)
			}
			cmd.Wait()
			verifyAfterCrash(t, dir)
		})
	}
}

func verifyAfterCrash(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	l := parseMemLog(b)
	ix, cp, ok, err := Open(filepath.Join(dir, "idx"), l.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := os.Stat(filepath.Join(dir, "idx.grow")); err == nil {
		t.Fatal("Open left the side file of a growth")
	}
	from, fromLoc := uint64(0), 1<<40|l.recOff(0)
	switch {
	case ok && cp.Applying:
		from, fromLoc = cp.BaseLSN, cp.BaseSeg<<40|cp.BaseOff
	case ok:
		from, fromLoc = cp.LSN, cp.Seg<<40|cp.Off
	case ix.Stats().Live != 0:
		t.Fatalf("no checkpoint but %d live slots", ix.Stats().Live)
	}
	if int(from) > len(l.recs) {
		t.Fatalf("checkpoint LSN %d past the %d records of the log", from, len(l.recs))
	}
	if from == 0 {
		fromLoc = 1<<40 | l.recOff(0)
	}
	swept := replay(t, ix, l, from, fromLoc)
	check(t, ix, l, l.model(len(l.recs)))
	t.Logf("%d records, checkpoint %v at LSN %d, %d replayed, %d swept, %+v", len(l.recs), ok, from, len(l.recs)-int(from), swept, ix.Stats())
}
