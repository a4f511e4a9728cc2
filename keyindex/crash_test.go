package keyindex

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
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
//
// With KEYINDEX_CRASH_ASYNC set it checkpoints as the keyspace's
// background loop does: BeginCheckpoint under the "lock" (this goroutine),
// the job's Run in another goroutine, ended by the next checkpoint's
// Settle; every write first looks its key up and checks the answer
// against the log. A stage met in the job (ckpt:pages, ckpt:block) then
// holds the job there while this goroutine goes on writing (no growth
// steps: a swap would wait for the job) and prints "AT stage" after 1000
// more records: the kill lands with a checkpoint in flight and writes
// staged after it began.
//
// With KEYINDEX_CRASH_STEPS set it checkpoints as the keyspace's
// checkpointer does: FreezeCheckpoint, then a CheckpointStep of 64
// writes every 10 records (writes, lookups and growth steps in between),
// the last step's job run and ended at once; the kill lands between two
// steps (ckpt:step) with the frozen writes partly stored and writes staged
// since the freeze, or at a random moment.
func crashChild(dir, stage string) {
	f, err := os.OpenFile(filepath.Join(dir, "log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		panic(err)
	}
	async := os.Getenv("KEYINDEX_CRASH_ASYNC") != ""
	steps := os.Getenv("KEYINDEX_CRASH_STEPS") != ""
	l := newMemLog()
	o := l.opts()
	o.Mode = pmem.ModeMsync
	var seen atomic.Int32
	var held atomic.Bool // the job is held at stage
	heldCh := make(chan struct{})
	o.testHook = func(s string) {
		nth := int32(3) // the third: a table with history
		if s == "ckpt:step" {
			nth = 100 // a checkpoint of 3000 writes takes 47 steps: the third one's
		}
		if s != stage || seen.Add(1) != nth {
			return
		}
		if async && (s == "ckpt:pages" || s == "ckpt:block") {
			held.Store(true)
			close(heldCh)
			select {} // the job never ends; the writer goes on
		}
		fmt.Println("AT", s)
		time.Sleep(time.Minute)
	}
	ix, _, _, err := Open(filepath.Join(dir, "idx"), o)
	if err != nil {
		panic(err)
	}
	fmt.Println("READY")
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	written := 4096
	cur := map[string]uint64{} // the log's newest state of each key
	heldAt := uint64(0)
	var jobDone chan struct{} // closed when the last job's Run returns
	for keys := 2000; ; keys += 50 {
		k := fmt.Sprintf("key:%d", r.IntN(keys))
		if async || steps {
			if got, ok := ix.Get([]byte(k)); got != cur[k] || ok != (cur[k] != 0) {
				panic(fmt.Sprintf("%s: Get %#x %v, the log has %#x", k, got, ok, cur[k]))
			}
		}
		loc, lsn := l.add(k, r.IntN(5) == 0)
		cur[k] = loc
		if _, err := f.Write(l.buf[written:]); err != nil {
			panic(err)
		}
		written = len(l.buf)
		if err := ix.Stage([]byte(k), loc, false); err != nil {
			panic(err)
		}
		if held.Load() {
			if heldAt == 0 {
				heldAt = lsn
			}
			if lsn == heldAt+1000 {
				fmt.Println("AT", stage, "with", ix.Staged(), "writes staged since")
				time.Sleep(time.Minute)
			}
			continue
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
		if steps && lsn%10 == 0 && ix.Frozen() {
			j, _, err := ix.CheckpointStep(64)
			if err != nil {
				panic(err)
			}
			if j != nil {
				j.Run()
				if err := ix.EndCheckpoint(j); err != nil {
					panic(err)
				}
			}
		}
		if lsn%3000 == 0 {
			if err := f.Sync(); err != nil { // the records up to lsn are durable
				panic(err)
			}
			cp := Checkpoint{LSN: lsn, Seg: 1, Off: l.recOff(lsn)}
			if steps {
				j, err := ix.FreezeCheckpoint(cp, nil) // finishes the one before, if its steps are not done
				if err != nil {
					panic(err)
				}
				if j != nil { // a frozen job: its stores and persist in another goroutine, writes going on
					go j.Run() // ended by the next freeze's Settle
				}
				continue
			}
			if !async {
				if err := ix.Checkpoint(cp); err != nil {
					panic(err)
				}
				continue
			}
			if jobDone != nil {
				select { // the last job ran, or is held at stage (it got there late)
				case <-jobDone:
				case <-heldCh:
					fmt.Println("AT", stage, "with", ix.Staged(), "writes staged since")
					time.Sleep(time.Minute)
				}
			}
			j, err := ix.BeginCheckpoint(cp) // settles the one before
			if err != nil {
				panic(err)
			}
			done := make(chan struct{})
			jobDone = done
			go func() { j.Run(); close(done) }()
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
	crashKill9(t, false, []string{"grow:started", "grow:step", "grow:persisted", "grow:built", "grow:renamed", "ckpt:applying", "ckpt:pages", "ckpt:block", "random", "random"})
}

// TestCrashKill9Async: kill -9 with a checkpoint's job (its pages and
// final block, run without the caller's lock) in flight while writes go
// on: held before its pages are persisted, before its block is, or at a
// random moment of a child checkpointing as the background loop does.
func TestCrashKill9Async(t *testing.T) {
	crashKill9(t, true, []string{"ckpt:applying", "ckpt:pages", "ckpt:block", "random", "random"})
}

// TestCrashKill9Steps: kill -9 between two steps of a checkpoint in steps
// (its frozen writes partly stored, writes staged since the freeze), with
// a frozen job held after its stores (before its pages are persisted), or
// at a random moment of a child checkpointing as the keyspace's
// checkpointer does.
func TestCrashKill9Steps(t *testing.T) {
	crashKill9(t, false, []string{"ckpt:step", "ckpt:step", "ckpt:stored", "ckpt:stored", "ckpt:applying", "ckpt:block", "random", "random"}, "KEYINDEX_CRASH_STEPS=1")
}

func crashKill9(t *testing.T, async bool, stages []string, env ...string) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	for _, stage := range stages {
		t.Run(stage, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), crashEnv+"="+dir, "KEYINDEX_CRASH_STAGE="+stage)
			if async {
				cmd.Env = append(cmd.Env, "KEYINDEX_CRASH_ASYNC=1")
			}
			cmd.Env = append(cmd.Env, env...)
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
