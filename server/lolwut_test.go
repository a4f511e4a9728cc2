package server

import (
	"context"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
)

// TestLolwutAndMallocStats checks LOLWUT's version line and its VERSION
// argument check, and MEMORY MALLOC-STATS' answer, as redis-server 7.0.15
// (built without jemalloc for the latter) gives them.
func TestLolwutAndMallocStats(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	rc := goRedis(t, s.addr)
	ctx := context.Background()
	for _, args := range [][]any{{"LOLWUT"}, {"LOLWUT", "VERSION", "7"}, {"lolwut", "version", "5", "1", "2"}} {
		v, err := rc.Do(ctx, args...).Text()
		if err != nil || v != "Redis ver. "+Version+"\n" {
			t.Errorf("%v = %q, %v", args, v, err)
		}
	}
	if err := rc.Do(ctx, "LOLWUT", "VERSION", "x").Err(); err == nil || !strings.Contains(err.Error(), "not an integer") {
		t.Errorf("LOLWUT VERSION x: %v", err)
	}
	v, err := rc.Do(ctx, "MEMORY", "MALLOC-STATS").Text()
	if err != nil || v != "Stats not supported for the current allocator" {
		t.Errorf("MEMORY MALLOC-STATS = %q, %v", v, err)
	}
	if err := rc.Do(ctx, "MEMORY", "MALLOC-STATS", "x").Err(); err == nil {
		t.Error("MEMORY MALLOC-STATS x: no error")
	}
}

// TestCStringArguments checks the arguments Redis reads as C strings (up to
// their first NUL) in FUNCTION LIST and CLIENT LIST TYPE, and the error
// texts that print them, against redis-server 7.0.15's answers; and that
// the shard pub/sub commands describe their channels as not-key arguments.
func TestCStringArguments(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	rc := goRedis(t, s.addr)
	ctx := context.Background()
	if v, err := rc.Do(ctx, "FUNCTION", "LIST", "WITHCODE\x00ab").Slice(); err != nil || len(v) != 0 {
		t.Errorf("FUNCTION LIST WITHCODE\\0ab = %v, %v", v, err)
	}
	if err := rc.Do(ctx, "FUNCTION", "LIST", "WITHCODE", "x\x00y").Err(); err == nil || err.Error() != "ERR Unknown argument x" {
		t.Errorf("FUNCTION LIST WITHCODE x\\0y: %v", err)
	}
	if err := rc.Do(ctx, "CLIENT", "LIST", "TYPE", "nor\x00x").Err(); err == nil || err.Error() != "ERR Unknown client type 'nor'" {
		t.Errorf("CLIENT LIST TYPE nor\\0x: %v", err)
	}
	if v, err := rc.Do(ctx, "CLIENT", "LIST", "TYPE", "normal\x00x").Text(); err != nil || !strings.Contains(v, "id=") {
		t.Errorf("CLIENT LIST TYPE normal\\0x = %q, %v", v, err)
	}
	info, err := rc.Do(ctx, "COMMAND", "INFO", "SPUBLISH").Slice()
	if err != nil || len(info) != 1 {
		t.Fatalf("COMMAND INFO SPUBLISH = %v, %v", info, err)
	}
	e := info[0].([]any)
	if e[3] != int64(1) || e[4] != int64(1) || e[5] != int64(1) || len(e[8].([]any)) != 1 {
		t.Errorf("COMMAND INFO SPUBLISH = %v, want first/last/step 1 1 1 and one key spec", e)
	}
	if err := rc.Do(ctx, "COMMAND", "GETKEYS", "SPUBLISH", "ch", "m").Err(); err == nil || !strings.Contains(err.Error(), "no key arguments") {
		t.Errorf("COMMAND GETKEYS SPUBLISH: %v (redis: the channel is not a key)", err)
	}
}
