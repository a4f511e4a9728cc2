package keyspace

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// PERSIMMON_KEYSPACE_PAUSE=stage:n stops the process (for an hour) the
// n-th time the cleaner reaches a stage, after printing a line saying so,
// so that a crash test can kill -9 a real server there (as keyindex's
// PERSIMMON_KEYINDEX_PAUSE does for checkpoints). Unset in production.
// The stages:
//
//	clean:group    a rewrite written as a group of records: the first
//	               record durable, the rest and the commit record not
//	               (the keyspace lock held)
//	clean:copied   a segment's copies written and applied, before the
//	               checkpoint that lets it go (the lock not held)
//	clean:removed  the segment removed (the lock held)
const keyspacePauseEnv = "PERSIMMON_KEYSPACE_PAUSE"

var pauseStage, pauseAt = parseKeyspacePause(os.Getenv(keyspacePauseEnv))

var pauseSeen atomic.Int64

func parseKeyspacePause(v string) (string, int64) {
	i := strings.LastIndexByte(v, ':')
	if i < 0 {
		return "", 0
	}
	n, err := strconv.ParseInt(v[i+1:], 10, 64)
	if err != nil || n <= 0 {
		return "", 0
	}
	return v[:i], n
}

// pauseHook is a stage of the cleaner met (see keyspacePauseEnv).
func pauseHook(stage string) {
	if pauseStage != "" && stage == pauseStage && pauseSeen.Add(1) == pauseAt {
		fmt.Fprintf(os.Stderr, "keyspace: paused at %s (%s)\n", stage, keyspacePauseEnv)
		time.Sleep(time.Hour)
	}
}
