package e2e

import (
	"slices"
	"strings"
	"testing"
)

// TestDiffStreamBlocking: blocking XREAD woken by XADD from another client,
// compared with redis-server transcript by transcript (runBlockScenario),
// with connections served by the event loop and by a goroutine each.
func TestDiffStreamBlocking(t *testing.T) {
	redisAddr := startRedis(t)
	scenarios := []struct {
		name  string
		steps []blockStep
	}{
		{"XREAD $ woken by XADD", []blockStep{
			do(2, "XADD", "s", "1-0", "f", "old"),
			send(1, "XREAD", "BLOCK", "5000", "STREAMS", "s", "$"), pause(),
			do(2, "XADD", "s", "2-0", "f", "new"),
			recv(1),
		}},
		{"every reader is served by one XADD, in arrival order", []blockStep{
			send(1, "XREAD", "BLOCK", "5000", "STREAMS", "s", "$"), pause(),
			send(2, "XREAD", "BLOCK", "5000", "COUNT", "1", "STREAMS", "s", "0"), pause(),
			send(3, "XREAD", "BLOCK", "0", "STREAMS", "s", "$"), pause(),
			do(4, "XADD", "s", "1-0", "a", "1"),
			recv(1), recv(2), recv(3),
		}},
		{"a reader above the new entry keeps waiting; the others are served", []blockStep{
			do(4, "XADD", "s", "5-0", "a", "1"),
			send(1, "XREAD", "BLOCK", "5000", "STREAMS", "s", "10-0"), pause(),
			send(2, "XREAD", "BLOCK", "5000", "STREAMS", "s", "$"), pause(),
			do(4, "XADD", "s", "7-0", "a", "2"),
			recv(2),
			do(4, "XADD", "s", "11-0", "a", "3"),
			recv(1),
		}},
		{"several streams: the one that gains an entry answers", []blockStep{
			do(3, "XADD", "a", "1-0", "f", "v"),
			send(1, "XREAD", "BLOCK", "5000", "STREAMS", "a", "b", "$", "$"), pause(),
			do(2, "XADD", "b", "3-0", "f", "v"),
			recv(1),
		}},
		{"MULTI/EXEC of several XADDs serves after EXEC, COUNT honoured", []blockStep{
			send(1, "XREAD", "BLOCK", "5000", "COUNT", "2", "STREAMS", "s", "$"), pause(),
			do(2, "MULTI"),
			do(2, "XADD", "s", "1-0", "n", "1"),
			do(2, "XADD", "s", "2-0", "n", "2"),
			do(2, "XADD", "s", "3-0", "n", "3"),
			do(2, "EXEC"),
			recv(1),
		}},
		{"a stream deleted and re-created while a reader waits", []blockStep{
			do(2, "XADD", "s", "5-0", "f", "v"),
			send(1, "XREAD", "BLOCK", "5000", "STREAMS", "s", "$"), pause(),
			do(2, "DEL", "s"),
			do(2, "XADD", "s", "3-0", "f", "low"),
			do(2, "XADD", "s", "6-0", "f", "high"),
			recv(1),
		}},
		{"a key that became a list does not wake the reader with WRONGTYPE", []blockStep{
			send(1, "XREAD", "BLOCK", "5000", "STREAMS", "s", "$"), pause(),
			do(2, "MULTI"),
			do(2, "XADD", "s", "1-0", "old", "v"),
			do(2, "DEL", "s"),
			do(2, "LPUSH", "s", "foo", "bar"),
			do(2, "EXEC"),
			do(2, "DEL", "s"),
			do(2, "XADD", "s", "2-0", "new", "v"),
			recv(1),
		}},
		{"timeout", []blockStep{
			send(1, "XREAD", "BLOCK", "300", "STREAMS", "s", "$"), pause(),
			recv(1),
			do(2, "XADD", "s", "1-0", "f", "v"),
		}},
		{"XREADGROUP > woken by XADD", []blockStep{
			do(2, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"),
			send(1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "5000", "STREAMS", "s", ">"), pause(),
			do(2, "XADD", "s", "1-0", "f", "v"),
			recv(1),
			do(2, "XPENDING", "s", "g"),
		}},
		{"one entry serves one group reader; the next XADD the other", []blockStep{
			do(3, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"),
			send(1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "5000", "STREAMS", "s", ">"), pause(),
			send(2, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", "5000", "STREAMS", "s", ">"), pause(),
			do(3, "XADD", "s", "1-0", "f", "a"),
			recv(1),
			do(3, "XADD", "s", "2-0", "f", "b"),
			recv(2),
			do(3, "XPENDING", "s", "g"),
		}},
		{"a group reader and a plain reader served by one XADD", []blockStep{
			do(3, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"),
			send(1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "5000", "NOACK", "STREAMS", "s", ">"), pause(),
			send(2, "XREAD", "BLOCK", "5000", "STREAMS", "s", "$"), pause(),
			do(3, "XADD", "s", "1-0", "f", "a"),
			recv(1), recv(2),
			do(3, "XPENDING", "s", "g"),
		}},
		{"XREADGROUP: key deleted", []blockStep{
			do(3, "XADD", "s", "666-0", "f", "v"),
			do(3, "XGROUP", "CREATE", "s", "g", "$"),
			send(1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "s", ">"), pause(),
			do(3, "DEL", "s"),
			recv(1),
		}},
		// Active expiry deletes the stream with no command after it: the
		// wake-up comes from the keyspace's expiry goroutine, not from a
		// command on the event loop (before: lost until the next command;
		// here the reader would wait out its 3 s BLOCK and answer nil).
		{"XREADGROUP: key expired by active expiry", []blockStep{
			do(3, "XADD", "s", "666-0", "f", "v"),
			do(3, "XGROUP", "CREATE", "s", "g", "$"),
			send(1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "3000", "STREAMS", "s", ">"), pause(),
			do(3, "PEXPIRE", "s", "50"),
			recv(1),
		}},
		{"XREADGROUP: key type changed in a transaction", []blockStep{
			do(3, "XADD", "s", "666-0", "f", "v"),
			do(3, "XGROUP", "CREATE", "s", "g", "$"),
			send(1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "s", ">"), pause(),
			do(3, "MULTI"), do(3, "DEL", "s"), do(3, "SADD", "s", "e1"), do(3, "EXEC"),
			recv(1),
		}},
		{"XREADGROUP: FLUSHALL", []blockStep{
			do(3, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"),
			send(1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "s", ">"), pause(),
			do(3, "FLUSHALL"),
			recv(1),
		}},
		{"XREADGROUP: XGROUP DESTROY answers NOGROUP", []blockStep{
			do(3, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"),
			send(1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "s", ">"), pause(),
			do(3, "XGROUP", "DESTROY", "s", "g"),
			recv(1),
		}},
		{"XREADGROUP: RENAME brings data", []blockStep{
			do(3, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"),
			send(1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "s", ">"), pause(),
			do(3, "XGROUP", "CREATE", "s2", "g", "$", "MKSTREAM"),
			do(3, "XADD", "s2", "100-0", "f1", "v1"),
			do(3, "RENAME", "s2", "s"),
			recv(1),
		}},
		{"XREADGROUP: RENAME without the group answers NOGROUP", []blockStep{
			do(3, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"),
			send(1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "s", ">"), pause(),
			do(3, "XADD", "s2", "100-0", "f1", "v1"),
			do(3, "RENAME", "s2", "s"),
			recv(1),
		}},
		{"XREADGROUP timeout", []blockStep{
			do(3, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"),
			send(1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "300", "STREAMS", "s", ">"), pause(),
			recv(1),
		}},
		{"XREAD BLOCK inside MULTI answers at once", []blockStep{
			do(1, "MULTI"),
			do(1, "XREAD", "BLOCK", "0", "STREAMS", "s", "$"),
			do(1, "EXEC"),
		}},
	}
	for _, mode := range []string{"loop", "goroutine"} {
		s := startServer(t, t.TempDir(), "--io", mode)
		for _, sc := range scenarios {
			t.Run(mode+"/"+sc.name, func(t *testing.T) {
				steps := append([]blockStep{do(9, "FLUSHALL")}, sc.steps...)
				want := runBlockScenario(t, redisAddr, steps)
				got := runBlockScenario(t, s.Addr, steps)
				if !slices.Equal(want, got) {
					t.Errorf("transcripts differ\nredis:\n\t%s\npersimmon:\n\t%s",
						strings.Join(want, "\n\t"), strings.Join(got, "\n\t"))
				}
			})
		}
	}
}
