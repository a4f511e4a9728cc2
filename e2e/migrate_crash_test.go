package e2e

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// MIGRATE's delete under kill -9. The source deletes a key only once the
// target acknowledged its RESTORE, and the target acknowledges only what
// is durable, so a kill -9 of either process at any point leaves the key
// on at least one of them (on both when the source dies between the
// acknowledgement and its delete) and never on neither; a key MIGRATE
// answered OK for is on the target and gone from the source. The points
// are reached exactly through a proxy between the two that can hold each
// direction's bytes (TestMigrateKill9AtEachStep), and at random moments
// of a run of MIGRATEs (TestMigrateKill9Random).

// migrateProxy forwards one or more source connections to the target,
// recording the bytes that passed each way and holding them in a
// direction while that direction is held.
type migrateProxy struct {
	t  *testing.T
	ln net.Listener

	mu     sync.Mutex
	cond   *sync.Cond
	target string
	hold   [2]bool   // up (source → target), down (target → source)
	seen   [2][]byte // what arrived from each side
	conns  []net.Conn
	closed bool
}

const (
	upstream   = 0 // source → target
	downstream = 1 // target → source
)

func startMigrateProxy(t *testing.T, target string) *migrateProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &migrateProxy{t: t, ln: ln, target: target}
	p.cond = sync.NewCond(&p.mu)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *migrateProxy) hostPort() (string, string) {
	h, port, _ := net.SplitHostPort(p.ln.Addr().String())
	return h, port
}

func (p *migrateProxy) accept() {
	for {
		src, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		target := p.target
		p.mu.Unlock()
		dst, err := net.Dial("tcp", target)
		if err != nil {
			src.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, src, dst)
		p.mu.Unlock()
		go p.pump(src, dst, upstream)
		go p.pump(dst, src, downstream)
	}
}

// pump copies from → to, recording and (while dir is held) holding.
func (p *migrateProxy) pump(from, to net.Conn, dir int) {
	defer from.Close()
	defer to.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			p.mu.Lock()
			p.seen[dir] = append(p.seen[dir], buf[:n]...)
			p.cond.Broadcast()
			for p.hold[dir] && !p.closed {
				p.cond.Wait()
			}
			closed := p.closed
			p.mu.Unlock()
			if closed {
				return
			}
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *migrateProxy) setHold(dir int, on bool) {
	p.mu.Lock()
	p.hold[dir] = on
	p.cond.Broadcast()
	p.mu.Unlock()
}

func (p *migrateProxy) setTarget(addr string) {
	p.mu.Lock()
	p.target = addr
	p.mu.Unlock()
}

// waitSeen waits until the bytes from dir contain s (a deadline bounds it).
func (p *migrateProxy) waitSeen(dir int, s string) {
	p.t.Helper()
	done := make(chan struct{})
	timer := time.AfterFunc(30*time.Second, func() { p.mu.Lock(); close(done); p.cond.Broadcast(); p.mu.Unlock() })
	defer timer.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for !bytes.Contains(p.seen[dir], []byte(s)) {
		select {
		case <-done:
			p.t.Fatalf("proxy: %q never passed (%s); seen %q", s, []string{"up", "down"}[dir], p.seen[dir])
		default:
		}
		p.cond.Wait()
	}
}

// drop closes every proxied connection (what is held is never delivered).
func (p *migrateProxy) drop() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

func (p *migrateProxy) close() {
	p.mu.Lock()
	p.closed = true
	p.cond.Broadcast()
	p.mu.Unlock()
	p.ln.Close()
	p.drop()
}

// migratePair is a source and a target server, each on its own directory,
// restartable after kill -9.
type migratePair struct {
	t            *testing.T
	mode         string
	srcDir, dDir string
	src, dst     *server
}

func newMigratePair(t *testing.T, mode string) *migratePair {
	m := &migratePair{t: t, mode: mode, srcDir: t.TempDir(), dDir: t.TempDir()}
	m.src = startServer(t, m.srcDir, "--durability", mode)
	m.dst = startServer(t, m.dDir, "--durability", mode)
	return m
}

func (m *migratePair) restartSource() {
	m.src.kill()
	m.src = startServer(m.t, m.srcDir, "--durability", m.mode)
}
func (m *migratePair) restartTarget() {
	m.dst.kill()
	m.dst = startServer(m.t, m.dDir, "--durability", m.mode)
}

// migrateClient is a client to s whose reads wait as long as MIGRATE does.
func migrateClient(t *testing.T, s *server) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DisableIdentity: true, ReadTimeout: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

// value reads key on s ("" and false when it does not exist).
func keyValue(t *testing.T, s *server, key string) (string, bool) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DisableIdentity: true})
	defer c.Close()
	v, err := c.Get(ctx, key).Result()
	if err == redis.Nil {
		return "", false
	}
	if err != nil {
		t.Fatalf("GET %s on %s: %v", key, s.Addr, err)
	}
	return v, true
}

func TestMigrateKill9AtEachStep(t *testing.T) {
	for _, mode := range []string{"pmem", "msync"} {
		t.Run(mode, func(t *testing.T) {
			steps := []struct {
				name string
				// run starts MIGRATE (result: its reply) and kills at the
				// step; it reports where the key must be afterwards.
				run func(m *migratePair, p *migrateProxy, migrate func() <-chan error) (onSource, onTarget bool)
			}{
				{name: "source killed before the target got the RESTORE",
					run: func(m *migratePair, p *migrateProxy, migrate func() <-chan error) (bool, bool) {
						p.setHold(upstream, true)
						res := migrate()
						p.waitSeen(upstream, "RESTORE")
						m.src.kill()
						p.drop()
						<-res
						return true, false
					}},
				{name: "target killed before it got the RESTORE",
					run: func(m *migratePair, p *migrateProxy, migrate func() <-chan error) (bool, bool) {
						p.setHold(upstream, true)
						res := migrate()
						p.waitSeen(upstream, "RESTORE")
						m.dst.kill()
						p.setHold(upstream, false) // the write to the dead target fails: the source sees its socket closed
						if err := <-res; err == nil || !strings.HasPrefix(err.Error(), "IOERR") {
							t.Errorf("MIGRATE to a killed target: %v, want IOERR", err)
						}
						return true, false
					}},
				{name: "source killed after the target acknowledged",
					run: func(m *migratePair, p *migrateProxy, migrate func() <-chan error) (bool, bool) {
						p.setHold(downstream, true)
						res := migrate()
						p.waitSeen(downstream, "+OK")
						m.src.kill()
						p.drop()
						<-res
						return true, true // the delete never ran: on both
					}},
				{name: "target killed after it acknowledged, then the source deletes",
					run: func(m *migratePair, p *migrateProxy, migrate func() <-chan error) (bool, bool) {
						p.setHold(downstream, true)
						res := migrate()
						p.waitSeen(downstream, "+OK")
						m.dst.kill()                 // what it acknowledged must survive this
						p.setHold(downstream, false) // the source gets the acknowledgement and deletes
						if err := <-res; err != nil {
							t.Errorf("MIGRATE: %v, want OK", err)
						}
						return false, true
					}},
				{name: "source killed right after its OK",
					run: func(m *migratePair, p *migrateProxy, migrate func() <-chan error) (bool, bool) {
						if err := <-migrate(); err != nil {
							t.Errorf("MIGRATE: %v, want OK", err)
						}
						m.src.kill()
						return false, true
					}},
			}
			for i, st := range steps {
				t.Run(st.name, func(t *testing.T) {
					m := newMigratePair(t, mode)
					p := startMigrateProxy(t, m.dst.Addr)
					key, val := fmt.Sprintf("mk%d", i), strings.Repeat(fmt.Sprintf("v%d-", i), 300)
					if err := migrateClient(t, m.src).Set(ctx, key, val, 0).Err(); err != nil {
						t.Fatal(err)
					}
					host, port := p.hostPort()
					migrate := func() <-chan error {
						c := migrateClient(t, m.src)
						res := make(chan error, 1)
						go func() { res <- c.Migrate(ctx, host, port, key, 0, 10*time.Second).Err() }()
						return res
					}
					wantSrc, wantDst := st.run(m, p, migrate)
					// Both restarted after kill -9: what is there now is
					// what each made durable.
					p.close()
					m.restartSource()
					m.restartTarget()
					gotS, onS := keyValue(t, m.src, key)
					gotD, onD := keyValue(t, m.dst, key)
					if !onS && !onD {
						t.Fatalf("the key is on neither server")
					}
					if onS != wantSrc || onD != wantDst {
						t.Errorf("on source %v, on target %v; want %v, %v", onS, onD, wantSrc, wantDst)
					}
					if (onS && gotS != val) || (onD && gotD != val) {
						t.Errorf("value changed: source %.20q, target %.20q", gotS, gotD)
					}
				})
			}
		})
	}
}

// TestMigrateKill9Random migrates keys one after another straight to the
// target and kills (-9) the source or the target at a random moment, then
// the other one too; after both restart, every key is on the source or
// the target (or both) with its value, and every key whose MIGRATE got OK
// is on the target and not on the source.
func TestMigrateKill9Random(t *testing.T) {
	rounds := 6
	if testing.Short() {
		rounds = 3
	}
	seed := crashSeed(t)
	rng := rand.New(rand.NewPCG(seed, 13))
	for _, mode := range []string{"pmem", "msync"} {
		t.Run(mode, func(t *testing.T) {
			m := newMigratePair(t, mode)
			for round := 0; round < rounds; round++ {
				const n = 400
				keys := make([]string, n)
				vals := map[string]string{}
				pipe := migrateClient(t, m.src).Pipeline()
				for i := range keys {
					keys[i] = fmt.Sprintf("r%d:k%d", round, i)
					vals[keys[i]] = fmt.Sprintf("%s=%x", keys[i], rng.Uint64())
					pipe.Set(ctx, keys[i], vals[keys[i]], 0)
				}
				if _, err := pipe.Exec(ctx); err != nil {
					t.Fatal(err)
				}
				host, port, _ := net.SplitHostPort(m.dst.Addr)
				c := migrateClient(t, m.src)
				var mu sync.Mutex
				acked := map[string]bool{}
				done := make(chan struct{})
				go func() {
					defer close(done)
					for _, k := range keys {
						if err := c.Migrate(ctx, host, port, k, 0, 5*time.Second).Err(); err != nil {
							return // a server is gone
						}
						mu.Lock()
						acked[k] = true
						mu.Unlock()
					}
				}()
				// Kill once some MIGRATEs went through (or the run ended).
				after := 1 + rng.IntN(n/2)
				for {
					mu.Lock()
					got := len(acked)
					mu.Unlock()
					if got >= after {
						break
					}
					select {
					case <-done:
					default:
						time.Sleep(time.Millisecond) // polling the condition above
						continue
					}
					break
				}
				killSource := rng.IntN(2) == 0
				if killSource {
					m.src.kill()
					m.dst.kill()
				} else {
					m.dst.kill()
					m.src.kill()
				}
				<-done
				m.restartSource()
				m.restartTarget()
				mu.Lock()
				okCount := len(acked)
				for _, k := range keys {
					gotS, onS := keyValue(t, m.src, k)
					gotD, onD := keyValue(t, m.dst, k)
					switch {
					case !onS && !onD:
						t.Fatalf("round %d (killed the %s first): %s is on neither server", round, map[bool]string{true: "source", false: "target"}[killSource], k)
					case acked[k] && (onS || !onD):
						t.Fatalf("round %d: %s was migrated (OK) but is on the source %v, on the target %v", round, k, onS, onD)
					case (onS && gotS != vals[k]) || (onD && gotD != vals[k]):
						t.Fatalf("round %d: %s changed: source %q, target %q, want %q", round, k, gotS, gotD, vals[k])
					}
				}
				mu.Unlock()
				t.Logf("round %d: %d of %d MIGRATEs answered OK before the kill of the %s", round, okCount, n,
					map[bool]string{true: "source", false: "target"}[killSource])
			}
		})
	}
}
