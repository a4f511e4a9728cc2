package e2e

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

// streamCrashModel is what the stream writers had acknowledged.
type streamCrashModel struct {
	mu      sync.Mutex
	shared  map[string]string   // XADD shared * → acknowledged ID → value
	maxID   map[string]streamID // stream → highest ID an XADD acknowledged
	added   map[string]int64    // stream → XADDs acknowledged
	own     map[string][]string // XADD own:w <explicit id> → acknowledged IDs
	deleted map[string]bool     // "stream id" → an XDEL of it was acknowledged
	tried   map[string]bool     // "stream id" → an XDEL of it was sent (maybe applied)

	// The group g on the shared stream: entries an acknowledged
	// XREADGROUP delivered (→ consumer), acknowledged XACKs, XACKs sent.
	delivered map[string]string
	acked     map[string]bool
	ackTried  map[string]bool
	maxRead   streamID // highest ID an acknowledged XREADGROUP delivered
}

type streamID struct{ ms, seq uint64 }

func parseStreamIDText(t *testing.T, s string) streamID {
	t.Helper()
	a, b, ok := strings.Cut(s, "-")
	ms, err1 := strconv.ParseUint(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("bad stream ID %q", s)
	}
	return streamID{ms, seq}
}

func (a streamID) less(b streamID) bool { return a.ms < b.ms || (a.ms == b.ms && a.seq < b.seq) }

// TestCrashKill9Streams runs concurrent stream writers (XADD with "*" to a
// shared stream, XADD with explicit IDs and XDEL on a stream per writer,
// XADD MAXLEN ~ on a trimmed stream per writer, XREADGROUP and XACK on a
// group of the shared stream), kills the server with
// SIGKILL at a random moment, restarts it and checks: every acknowledged
// entry is there with its value unless an acknowledged XDEL or the trim
// removed it, every acknowledged XDEL stays deleted, and no stream's
// last-generated-id or entries-added goes back (so XADD * never hands out
// an ID at or below one it acknowledged before the crash), acknowledged
// XACKs stay acknowledged, delivered entries stay pending for their
// consumer, and the group's last-delivered-id never goes back.
func TestCrashKill9Streams(t *testing.T) {
	rounds := 8
	if testing.Short() {
		rounds = 3
	}
	seed := crashSeed(t)
	rng := rand.New(rand.NewPCG(seed, 2))
	for _, mode := range []string{"pmem", "msync"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			m := &streamCrashModel{shared: map[string]string{}, maxID: map[string]streamID{}, added: map[string]int64{},
				own: map[string][]string{}, deleted: map[string]bool{}, tried: map[string]bool{},
				delivered: map[string]string{}, acked: map[string]bool{}, ackTried: map[string]bool{}}
			for round := 0; round < rounds; round++ {
				s := startServer(t, dir, "--durability", mode, "--segment-size", "1mb")
				verifyStreamCrashModel(t, s, m)
				runStreamWritersUntilKilled(t, s, m, round, int64(100+rng.IntN(1500)), rng.Uint64())
			}
			s := startServer(t, dir, "--durability", mode, "--segment-size", "1mb")
			verifyStreamCrashModel(t, s, m)
			if len(m.shared) == 0 || len(m.own) == 0 || len(m.deleted) == 0 || len(m.added) < 2*crashWriters || len(m.delivered) == 0 || len(m.acked) == 0 {
				t.Fatalf("some write kinds were never acknowledged: %d shared %d own %d deleted %d streams %d delivered %d acked",
					len(m.shared), len(m.own), len(m.deleted), len(m.added), len(m.delivered), len(m.acked))
			}
		})
	}
}

func streamClient(s *server) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DisableIdentity: true, PoolSize: 1, Protocol: 2})
}

func runStreamWritersUntilKilled(t *testing.T, s *server, m *streamCrashModel, round int, target int64, seed uint64) {
	var acked atomic.Int64
	var wg sync.WaitGroup
	killed := make(chan struct{})
	var once sync.Once
	ack := func() {
		if acked.Add(1) == target {
			once.Do(func() { s.kill(); close(killed) })
		}
	}
	noteAdd := func(stream, id string) {
		// The shared stream's writers record their acknowledgements in
		// any order: keep the highest.
		if sid := parseStreamIDText(t, id); m.maxID[stream].less(sid) {
			m.maxID[stream] = sid
		}
		m.added[stream]++
	}
	for w := 0; w < crashWriters; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			c := streamClient(s)
			defer c.Close()
			own, trim := fmt.Sprintf("own:%d", w), fmt.Sprintf("trim:%d", w)
			for i := 0; ; i++ {
				select {
				case <-killed:
					return
				default:
				}
				var err error
				switch i % 6 {
				case 0:
					v := fmt.Sprintf("r%d-w%d-i%d", round, w, i)
					var id string
					if id, err = c.XAdd(ctx, &redis.XAddArgs{Stream: "shared", ID: "*", Values: []string{"f", v}}).Result(); err == nil {
						m.mu.Lock()
						noteAdd("shared", id)
						m.shared[id] = v
						m.mu.Unlock()
					}
				case 1:
					id := fmt.Sprintf("%d-%d", round*1_000_000+i, w)
					if err = c.XAdd(ctx, &redis.XAddArgs{Stream: own, ID: id, Values: []string{"f", id}}).Err(); err == nil {
						m.mu.Lock()
						noteAdd(own, id)
						m.own[own] = append(m.own[own], id)
						m.mu.Unlock()
					}
				case 2:
					m.mu.Lock()
					ids := m.own[own]
					var id string
					if len(ids) > 0 {
						id = ids[rng.IntN(len(ids))]
						m.tried[own+" "+id] = true
					}
					m.mu.Unlock()
					if id == "" {
						continue
					}
					if err = c.XDel(ctx, own, id).Err(); err == nil {
						m.mu.Lock()
						m.deleted[own+" "+id] = true
						m.mu.Unlock()
					}
				case 4:
					var res []redis.XStream
					consumer := fmt.Sprintf("w%d", w)
					if res, err = c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: consumer, Streams: []string{"shared", ">"}, Count: 3, Block: -1}).Result(); err == redis.Nil {
						err = nil
					}
					if err == nil {
						m.mu.Lock()
						for _, st := range res {
							for _, msg := range st.Messages {
								m.delivered[msg.ID] = consumer
								if sid := parseStreamIDText(t, msg.ID); m.maxRead.less(sid) {
									m.maxRead = sid
								}
							}
						}
						m.mu.Unlock()
					}
				case 5:
					m.mu.Lock()
					var id string
					for d := range m.delivered { // a random one: map order
						if !m.ackTried[d] {
							id = d
							m.ackTried[d] = true
							break
						}
					}
					m.mu.Unlock()
					if id == "" {
						continue
					}
					if err = c.XAck(ctx, "shared", "g", id).Err(); err == nil {
						m.mu.Lock()
						m.acked[id] = true
						m.mu.Unlock()
					}
				case 3:
					var id string
					if id, err = c.XAdd(ctx, &redis.XAddArgs{Stream: trim, MaxLen: 50, Approx: true, ID: "*", Values: []string{"f", "v"}}).Result(); err == nil {
						m.mu.Lock()
						noteAdd(trim, id)
						m.mu.Unlock()
					}
				}
				if err == nil {
					ack()
				}
			}
		}()
	}
	wg.Wait()
}

func verifyStreamCrashModel(t *testing.T, s *server, m *streamCrashModel) {
	t.Helper()
	c := streamClient(s)
	defer c.Close()
	m.mu.Lock()
	defer m.mu.Unlock()
	entries := func(stream string) map[string]string {
		msgs, err := c.XRange(ctx, stream, "-", "+").Result()
		if err != nil {
			t.Fatalf("XRANGE %s: %v", stream, err)
		}
		out := make(map[string]string, len(msgs))
		for _, msg := range msgs {
			out[msg.ID] = fmt.Sprint(msg.Values["f"])
		}
		return out
	}
	if err := c.XGroupCreateMkStream(ctx, "shared", "g", "0").Err(); err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		t.Fatalf("XGROUP CREATE: %v", err)
	}
	// The PEL: acknowledged XACKs stay acknowledged; delivered entries no
	// XACK was sent for are pending, with the consumer they went to.
	pel := map[string]string{}
	pending, err := c.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: "shared", Group: "g", Start: "-", End: "+", Count: 1 << 30}).Result()
	if err != nil {
		t.Fatalf("XPENDING: %v", err)
	}
	for _, p := range pending {
		pel[p.ID] = p.Consumer
		if p.RetryCount < 1 {
			t.Fatalf("pending %s has delivery count %d", p.ID, p.RetryCount)
		}
	}
	for id, consumer := range m.delivered {
		switch {
		case m.acked[id]:
			if _, ok := pel[id]; ok {
				t.Fatalf("entry %s is pending again after an acknowledged XACK", id)
			}
		case !m.ackTried[id]:
			if pel[id] != consumer {
				t.Fatalf("delivered entry %s: pending for %q, want %q", id, pel[id], consumer)
			}
		}
	}
	if groups, err := c.XInfoGroups(ctx, "shared").Result(); err != nil || len(groups) != 1 {
		t.Fatalf("XINFO GROUPS: %v %v", groups, err)
	} else if last := parseStreamIDText(t, groups[0].LastDeliveredID); last.less(m.maxRead) {
		t.Fatalf("group last-delivered-id %s went back below %d-%d", groups[0].LastDeliveredID, m.maxRead.ms, m.maxRead.seq)
	}
	got := entries("shared")
	for id, v := range m.shared {
		if got[id] != v {
			t.Fatalf("shared: acknowledged entry %s = %q, want %q", id, got[id], v)
		}
	}
	for stream, ids := range m.own {
		got := entries(stream)
		for _, id := range ids {
			_, present := got[id]
			k := stream + " " + id
			if m.tried[k] && !m.deleted[k] {
				continue // an XDEL the crash cut short: either is right
			}
			if del := m.deleted[k]; del == present {
				t.Fatalf("%s: entry %s present=%v after an acknowledged XDEL=%v", stream, id, present, del)
			}
		}
	}
	for stream, max := range m.maxID {
		info, err := c.Do(ctx, "XINFO", "STREAM", stream).Slice()
		if err != nil {
			t.Fatalf("XINFO STREAM %s: %v", stream, err)
		}
		fields := map[string]any{}
		for i := 0; i+1 < len(info); i += 2 {
			fields[fmt.Sprint(info[i])] = info[i+1]
		}
		last := parseStreamIDText(t, fmt.Sprint(fields["last-generated-id"]))
		if last.less(max) {
			t.Fatalf("%s: last-generated-id %d-%d went back below the acknowledged %d-%d", stream, last.ms, last.seq, max.ms, max.seq)
		}
		if n, _ := fields["entries-added"].(int64); n < m.added[stream] {
			t.Fatalf("%s: entries-added %d below the %d XADDs acknowledged", stream, n, m.added[stream])
		}
	}
}
