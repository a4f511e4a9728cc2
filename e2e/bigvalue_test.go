package e2e

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// infoInt reads an integer field of INFO.
func infoInt(t *testing.T, c *redis.Client, name string) int64 {
	t.Helper()
	info, err := c.Info(ctx, "everything").Result()
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(infoField(info, name), 10, 64)
	if err != nil {
		t.Fatalf("INFO %s: %q", name, infoField(info, name))
	}
	return n
}

// TestBigValueKill9: EXPIRE, PEXPIRE, PEXPIREAT, GETEX EX, PERSIST, RENAME and MOVE
// of a 64 MB string append a few dozen bytes to the log (INFO
// wal_appended_bytes; main's code appended the whole value each time),
// grow neither the data directory nor the anonymous RSS by a copy of it,
// and each is found after a kill -9 and restart, in both key-index modes;
// so do SETRANGE and APPEND of a few bytes (main's code logged only the
// bytes too, but copied the 64 MB value to the heap at the first patch).
func TestBigValueKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("64 MB values")
	}
	const size = 64 << 20
	val := make([]byte, size)
	for i := range val {
		val[i] = byte(i*7 + i>>12)
	}
	for _, kix := range []string{"yes", "no"} {
		t.Run("key-index="+kix, func(t *testing.T) {
			dir := t.TempDir()
			s := startServer(t, dir, "--key-index", kix)
			c := bigClient(t, s, 0)
			if err := c.Set(ctx, "big", val, 0).Err(); err != nil {
				t.Fatal(err)
			}
			want := append([]byte(nil), val...)
			name, db := "big", 0
			var expireAt int64 // ms, 0 = none
			step := func(what string, run func(c *redis.Client) error, check func(c *redis.Client)) {
				t.Helper()
				before := infoInt(t, c, "wal_appended_bytes")
				arena := infoInt(t, c, "arena_bytes")
				anon := infoInt(t, c, "used_memory_rss_anon")
				if err := run(c); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if n := infoInt(t, c, "wal_appended_bytes") - before; n > 4096 {
					t.Fatalf("%s appended %d bytes to the log, want O(change)", what, n)
				}
				if n := infoInt(t, c, "arena_bytes") - arena; n > size/4 {
					t.Fatalf("%s grew the data directory by %d bytes", what, n)
				}
				// A reply's buffer is handed back to the OS by a
				// collection that starts when the loop drops it, after
				// its last byte went out: give that collection up to 5 s.
				for deadline := time.Now().Add(5 * time.Second); ; {
					n := infoInt(t, c, "used_memory_rss_anon") - anon
					if n <= size/2 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s grew the anonymous RSS by %d bytes", what, n)
					}
					time.Sleep(20 * time.Millisecond)
				}
				s.kill()
				s = startServer(t, dir, "--key-index", kix)
				c = bigClient(t, s, db)
				got, err := c.Get(ctx, name).Bytes()
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("after %s and kill -9: GET %s in db %d: %d bytes (%v), want %d", what, name, db, len(got), err, len(want))
				}
				if at, err := c.PExpireTime(ctx, name).Result(); err != nil || (expireAt == 0) != (at < 0) || expireAt != 0 && at.Milliseconds() != expireAt {
					t.Fatalf("after %s and kill -9: PEXPIRETIME %s = %v (%v), want %d", what, name, at, err, expireAt)
				}
				if check != nil {
					check(c)
				}
			}
			at := time.Now().Add(time.Hour).UnixMilli()
			step("EXPIRE", func(c *redis.Client) error {
				expireAt = 0
				if err := c.Expire(ctx, name, time.Hour).Err(); err != nil {
					return err
				}
				expireAt, _ = pexpireTime(c, name)
				return nil
			}, nil)
			step("PEXPIRE", func(c *redis.Client) error {
				if err := c.PExpire(ctx, name, 2*time.Hour).Err(); err != nil {
					return err
				}
				expireAt, _ = pexpireTime(c, name)
				return nil
			}, nil)
			step("PEXPIREAT", func(c *redis.Client) error {
				expireAt = at
				return c.PExpireAt(ctx, name, time.UnixMilli(at)).Err()
			}, nil)
			step("GETEX EX", func(c *redis.Client) error {
				v, err := c.GetEx(ctx, name, 3*time.Hour).Bytes()
				if err != nil || len(v) != size {
					return fmt.Errorf("GETEX: %d bytes (%v)", len(v), err)
				}
				expireAt, err = pexpireTime(c, name)
				return err
			}, nil)
			step("PERSIST", func(c *redis.Client) error {
				expireAt = 0
				return c.Persist(ctx, name).Err()
			}, nil)
			step("RENAME", func(c *redis.Client) error {
				if err := c.Expire(ctx, name, time.Hour).Err(); err != nil {
					return err
				}
				expireAt, _ = pexpireTime(c, name)
				name = "big2"
				return c.Rename(ctx, "big", "big2").Err()
			}, func(c *redis.Client) {
				if n, _ := c.Exists(ctx, "big").Result(); n != 0 {
					t.Fatalf("the source of the RENAME came back")
				}
			})
			step("MOVE", func(c *redis.Client) error {
				db = 5
				return c.Move(ctx, name, 5).Err()
			}, func(c *redis.Client) {
				c0 := bigClient(t, s, 0)
				if n, _ := c0.Exists(ctx, name).Result(); n != 0 {
					t.Fatalf("the source of the MOVE came back")
				}
			})
			step("SETRANGE", func(c *redis.Client) error {
				copy(want[size/2:], "patch")
				return c.SetRange(ctx, name, size/2, "patch").Err()
			}, nil)
			step("APPEND", func(c *redis.Client) error {
				want = append(want, "tail"...)
				if n, err := c.Append(ctx, name, "tail").Result(); err != nil || n != int64(len(want)) {
					return fmt.Errorf("APPEND replied %d (%v), want %d", n, err, len(want))
				}
				return nil
			}, func(c *redis.Client) {
				if n, err := c.StrLen(ctx, name).Result(); err != nil || n != int64(len(want)) {
					t.Fatalf("STRLEN %d (%v), want %d", n, err, len(want))
				}
			})
			if err := s.stop(); err != nil {
				t.Fatal(err)
			}
			if out, code := persimmonCheck(t, "verify", dir); code != 0 {
				t.Fatalf("persimmon-check verify exited %d on the references:\n%s", code, out)
			}
		})
	}
}

func pexpireTime(c *redis.Client, key string) (int64, error) {
	d, err := c.PExpireTime(ctx, key).Result()
	return d.Milliseconds(), err
}

// bigClient is a client of db on s whose timeouts leave room for 64 MB
// replies on a loaded machine (go-redis's default read timeout is 3 s).
func bigClient(t *testing.T, s *server, db int) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DB: db, MaxRetries: -1, DisableIdentity: true, ReadTimeout: time.Minute, WriteTimeout: time.Minute})
	t.Cleanup(func() { c.Close() })
	return c
}
