package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Integration tests: the real binary driven through go-redis's typed API,
// one test per command group, plus pipelining, restart persistence, AUTH,
// SELECT isolation, large values and protocol limits.

// farFuture is 2100-01-01T00:00:00Z: absolute expire times in tests use it
// so EXPIRETIME replies are exact.
var farFuture = time.Unix(4102444800, 0)

// is fails the test unless err is nil and got equals want.
func is[T comparable](t *testing.T, what string, got T, err error, want T) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: error %v, want %v", what, err, want)
	}
	if got != want {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

// isNil fails the test unless err is redis.Nil (a nil reply).
func isNil(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, redis.Nil) {
		t.Fatalf("%s: got error %v, want a nil reply", what, err)
	}
}

// isErr fails the test unless err is a server error reply with exactly text.
func isErr(t *testing.T, what string, err error, text string) {
	t.Helper()
	var re redis.Error
	if !errors.As(err, &re) {
		t.Fatalf("%s: got %v, want error reply %q", what, err, text)
	}
	if re.Error() != text {
		t.Fatalf("%s: error %q, want %q", what, re.Error(), text)
	}
}

// ok fails the test on err.
func ok(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// within fails unless lo <= got <= hi.
func within(t *testing.T, what string, got time.Duration, err error, lo, hi time.Duration) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got < lo || got > hi {
		t.Fatalf("%s = %v, want within [%v, %v]", what, got, lo, hi)
	}
}

// dbClient is a go-redis client on database db of s.
func dbClient(t *testing.T, s *server, db int, password string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DB: db, Password: password, MaxRetries: -1, DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	return c
}

func TestStringCommands(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client()

	// SET, GET, and SET's options through SetArgs.
	is(t, "SET", c.Set(ctx, "k", "v", 0).Val(), nil, "OK")
	v, err := c.Get(ctx, "k").Result()
	is(t, "GET", v, err, "v")
	_, err = c.Get(ctx, "missing").Result()
	isNil(t, "GET missing", err)
	_, err = c.SetArgs(ctx, "k", "x", redis.SetArgs{Mode: "NX"}).Result()
	isNil(t, "SET NX on an existing key", err)
	v, err = c.SetArgs(ctx, "nx", "1", redis.SetArgs{Mode: "NX"}).Result()
	is(t, "SET NX on a new key", v, err, "OK")
	_, err = c.SetArgs(ctx, "xx", "1", redis.SetArgs{Mode: "XX"}).Result()
	isNil(t, "SET XX on a missing key", err)
	v, err = c.SetArgs(ctx, "k", "v2", redis.SetArgs{Mode: "XX", Get: true}).Result()
	is(t, "SET XX GET", v, err, "v")
	v, err = c.SetArgs(ctx, "k", "v3", redis.SetArgs{Mode: "NX", Get: true}).Result()
	is(t, "SET NX GET on an existing key (returns the old value, sets nothing)", v, err, "v2")
	is(t, "GET after SET NX GET", c.Get(ctx, "k").Val(), nil, "v2")
	_, err = c.SetArgs(ctx, "newget", "v", redis.SetArgs{Get: true}).Result()
	isNil(t, "SET GET on a missing key", err)
	ok(t, "SET EX via TTL", c.SetArgs(ctx, "ex", "v", redis.SetArgs{TTL: 1000 * time.Second}).Err())
	within(t, "TTL after SET EX 1000", c.TTL(ctx, "ex").Val(), nil, 990*time.Second, 1000*time.Second)
	ok(t, "SET PX via TTL", c.SetArgs(ctx, "px", "v", redis.SetArgs{TTL: 1500500 * time.Millisecond}).Err())
	within(t, "PTTL after SET PX", c.PTTL(ctx, "px").Val(), nil, 1400*time.Second, 1500500*time.Millisecond)
	ok(t, "SET EXAT", c.SetArgs(ctx, "exat", "v", redis.SetArgs{ExpireAt: farFuture}).Err())
	d, err := c.ExpireTime(ctx, "exat").Result()
	is(t, "EXPIRETIME after SET EXAT", d, err, time.Duration(farFuture.Unix())*time.Second)
	ok(t, "SET PXAT", c.SetArgs(ctx, "pxat", "v", redis.SetArgs{ExpireAt: farFuture.Add(123 * time.Millisecond)}).Err())
	d, err = c.PExpireTime(ctx, "pxat").Result()
	is(t, "PEXPIRETIME after SET PXAT", d, err, time.Duration(farFuture.UnixMilli()+123)*time.Millisecond)
	ok(t, "SET KEEPTTL", c.SetArgs(ctx, "exat", "w", redis.SetArgs{KeepTTL: true}).Err())
	d, err = c.ExpireTime(ctx, "exat").Result()
	is(t, "EXPIRETIME after SET KEEPTTL", d, err, time.Duration(farFuture.Unix())*time.Second)
	ok(t, "plain SET", c.Set(ctx, "exat", "x", 0).Err())
	is(t, "TTL after a plain SET clears it", c.TTL(ctx, "exat").Val(), nil, time.Duration(-1))
	isErr(t, "SET KEEPTTL EX", c.SetArgs(ctx, "k", "v", redis.SetArgs{KeepTTL: true, TTL: 10 * time.Second}).Err(), "ERR syntax error")
	isErr(t, "SET EXAT EX", c.SetArgs(ctx, "k", "v", redis.SetArgs{ExpireAt: farFuture, TTL: 10 * time.Second}).Err(), "ERR syntax error")
	isErr(t, "SET NX XX", c.Do(ctx, "SET", "k", "v", "NX", "XX").Err(), "ERR syntax error")
	isErr(t, "SET EX 0", c.Do(ctx, "SET", "k", "v", "EX", "0").Err(), "ERR invalid expire time in 'set' command")
	is(t, "value untouched by failed SETs", c.Get(ctx, "k").Val(), nil, "v2")

	// SETNX, SETEX, PSETEX, GETSET, GETDEL, GETEX.
	is(t, "SETNX new", c.SetNX(ctx, "snx", "1", 0).Val(), nil, true)
	is(t, "SETNX existing", c.SetNX(ctx, "snx", "2", 0).Val(), nil, false)
	is(t, "SET XX existing", c.SetXX(ctx, "snx", "3", 0).Val(), nil, true)
	is(t, "GET after SET XX", c.Get(ctx, "snx").Val(), nil, "3")
	ok(t, "SETEX", c.SetEx(ctx, "sex", "v", 1000*time.Second).Err())
	within(t, "TTL after SETEX", c.TTL(ctx, "sex").Val(), nil, 990*time.Second, 1000*time.Second)
	ok(t, "PSETEX", c.Do(ctx, "PSETEX", "psex", 1000000, "v").Err())
	within(t, "PTTL after PSETEX", c.PTTL(ctx, "psex").Val(), nil, 990*time.Second, 1000*time.Second)
	isErr(t, "SETEX 0", c.SetEx(ctx, "sex", "v", 0).Err(), "ERR invalid expire time in 'setex' command")
	_, err = c.GetSet(ctx, "gs", "a").Result()
	isNil(t, "GETSET on a missing key", err)
	v, err = c.GetSet(ctx, "gs", "b").Result()
	is(t, "GETSET", v, err, "a")
	v, err = c.GetDel(ctx, "gs").Result()
	is(t, "GETDEL", v, err, "b")
	_, err = c.GetDel(ctx, "gs").Result()
	isNil(t, "GETDEL again", err)
	ok(t, "SET", c.Set(ctx, "gex", "v", 0).Err())
	v, err = c.GetEx(ctx, "gex", 1000*time.Second).Result()
	is(t, "GETEX EX", v, err, "v")
	within(t, "TTL after GETEX EX", c.TTL(ctx, "gex").Val(), nil, 990*time.Second, 1000*time.Second)
	v, err = c.GetEx(ctx, "gex", 2000500*time.Millisecond).Result()
	is(t, "GETEX PX", v, err, "v")
	within(t, "PTTL after GETEX PX", c.PTTL(ctx, "gex").Val(), nil, 1990*time.Second, 2000500*time.Millisecond)
	v, err = c.GetEx(ctx, "gex", -1).Result()
	is(t, "GETEX without options", v, err, "v")
	within(t, "TTL after plain GETEX", c.TTL(ctx, "gex").Val(), nil, 1990*time.Second, 2001*time.Second)
	v, err = c.GetEx(ctx, "gex", 0).Result()
	is(t, "GETEX PERSIST", v, err, "v")
	is(t, "TTL after GETEX PERSIST", c.TTL(ctx, "gex").Val(), nil, time.Duration(-1))
	_, err = c.GetEx(ctx, "missing", time.Second).Result()
	isNil(t, "GETEX on a missing key", err)

	// MSET, MSETNX, MGET.
	ok(t, "MSET", c.MSet(ctx, "m1", "a", "m2", "b", "m3", "c").Err())
	vals, err := c.MGet(ctx, "m1", "missing", "m3").Result()
	ok(t, "MGET", err)
	if fmt.Sprint(vals) != "[a <nil> c]" {
		t.Fatalf("MGET = %v, want [a <nil> c]", vals)
	}
	is(t, "MSETNX with one existing key", c.MSetNX(ctx, "n1", "x", "m1", "y").Val(), nil, false)
	is(t, "EXISTS n1 after a failed MSETNX", c.Exists(ctx, "n1").Val(), nil, int64(0))
	is(t, "m1 after a failed MSETNX", c.Get(ctx, "m1").Val(), nil, "a")
	is(t, "MSETNX new keys", c.MSetNX(ctx, "n1", "x", "n2", "y").Val(), nil, true)
	is(t, "n2", c.Get(ctx, "n2").Val(), nil, "y")

	// INCR family.
	n, err := c.Incr(ctx, "cnt").Result()
	is(t, "INCR new", n, err, int64(1))
	n, err = c.IncrBy(ctx, "cnt", 41).Result()
	is(t, "INCRBY", n, err, int64(42))
	n, err = c.Decr(ctx, "cnt").Result()
	is(t, "DECR", n, err, int64(41))
	n, err = c.DecrBy(ctx, "cnt", 50).Result()
	is(t, "DECRBY", n, err, int64(-9))
	ok(t, "SET max", c.Set(ctx, "max", "9223372036854775807", 0).Err())
	isErr(t, "INCR overflow", c.Incr(ctx, "max").Err(), "ERR increment or decrement would overflow")
	isErr(t, "INCR non-integer", c.Incr(ctx, "k").Err(), "ERR value is not an integer or out of range")
	f, err := c.IncrByFloat(ctx, "fl", 10.5).Result()
	is(t, "INCRBYFLOAT new", f, err, 10.5)
	f, err = c.IncrByFloat(ctx, "fl", 0.1).Result()
	is(t, "INCRBYFLOAT", f, err, 10.6)
	is(t, "GET after INCRBYFLOAT", c.Get(ctx, "fl").Val(), nil, "10.6")
	ok(t, "SET 5.0e3", c.Set(ctx, "fl", "5.0e3", 0).Err())
	f, err = c.IncrByFloat(ctx, "fl", 200).Result()
	is(t, "INCRBYFLOAT on 5.0e3", f, err, 5200.0)
	is(t, "GET after INCRBYFLOAT on 5.0e3", c.Get(ctx, "fl").Val(), nil, "5200")
	isErr(t, "INCRBYFLOAT non-float", c.IncrByFloat(ctx, "k", 1).Err(), "ERR value is not a valid float")

	// APPEND, STRLEN, GETRANGE, SETRANGE.
	n, err = c.Append(ctx, "ap", "Hello").Result()
	is(t, "APPEND new", n, err, int64(5))
	n, err = c.Append(ctx, "ap", " World").Result()
	is(t, "APPEND", n, err, int64(11))
	is(t, "STRLEN", c.StrLen(ctx, "ap").Val(), nil, int64(11))
	is(t, "STRLEN missing", c.StrLen(ctx, "missing").Val(), nil, int64(0))
	is(t, "GETRANGE -5 -1", c.GetRange(ctx, "ap", -5, -1).Val(), nil, "World")
	is(t, "GETRANGE 0 4", c.GetRange(ctx, "ap", 0, 4).Val(), nil, "Hello")
	is(t, "GETRANGE 5 3", c.GetRange(ctx, "ap", 5, 3).Val(), nil, "")
	n, err = c.SetRange(ctx, "ap", 6, "Redis").Result()
	is(t, "SETRANGE", n, err, int64(11))
	is(t, "GET after SETRANGE", c.Get(ctx, "ap").Val(), nil, "Hello Redis")
	n, err = c.SetRange(ctx, "pad", 3, "x").Result()
	is(t, "SETRANGE padding", n, err, int64(4))
	is(t, "padded value", c.Get(ctx, "pad").Val(), nil, "\x00\x00\x00x")
	isErr(t, "SETRANGE negative offset", c.SetRange(ctx, "pad", -1, "x").Err(), "ERR offset is out of range")
	isErr(t, "SETRANGE beyond 512 MB", c.SetRange(ctx, "pad", 512<<20, "x").Err(),
		"ERR string exceeds maximum allowed size (proto-max-bulk-len)")

	// SETBIT, GETBIT, BITCOUNT, BITPOS.
	n, err = c.SetBit(ctx, "bits", 7, 1).Result()
	is(t, "SETBIT", n, err, int64(0))
	n, err = c.SetBit(ctx, "bits", 7, 1).Result()
	is(t, "SETBIT again", n, err, int64(1))
	is(t, "GET bits", c.Get(ctx, "bits").Val(), nil, "\x01")
	is(t, "GETBIT 7", c.GetBit(ctx, "bits", 7).Val(), nil, int64(1))
	is(t, "GETBIT past the end", c.GetBit(ctx, "bits", 1000).Val(), nil, int64(0))
	isErr(t, "SETBIT offset 2^32", c.SetBit(ctx, "bits", 1<<32, 1).Err(), "ERR bit offset is not an integer or out of range")
	ok(t, "SET foobar", c.Set(ctx, "fb", "foobar", 0).Err())
	is(t, "BITCOUNT", c.BitCount(ctx, "fb", nil).Val(), nil, int64(26))
	is(t, "BITCOUNT 1 1", c.BitCount(ctx, "fb", &redis.BitCount{Start: 1, End: 1}).Val(), nil, int64(6))
	is(t, "BITCOUNT 1 1 BYTE", c.BitCount(ctx, "fb", &redis.BitCount{Start: 1, End: 1, Unit: redis.BitCountIndexByte}).Val(), nil, int64(6))
	is(t, "BITCOUNT 5 30 BIT", c.BitCount(ctx, "fb", &redis.BitCount{Start: 5, End: 30, Unit: redis.BitCountIndexBit}).Val(), nil, int64(17))
	is(t, "BITCOUNT missing", c.BitCount(ctx, "missing", nil).Val(), nil, int64(0))
	ok(t, "SET ff f0 00", c.Set(ctx, "bp", "\xff\xf0\x00", 0).Err())
	is(t, "BITPOS 0", c.BitPos(ctx, "bp", 0).Val(), nil, int64(12))
	ok(t, "SET 00 ff f0", c.Set(ctx, "bp", "\x00\xff\xf0", 0).Err())
	is(t, "BITPOS 1 0", c.BitPos(ctx, "bp", 1, 0).Val(), nil, int64(8))
	is(t, "BITPOS 1 2", c.BitPos(ctx, "bp", 1, 2).Val(), nil, int64(16))
	is(t, "BITPOS 1 2 -1", c.BitPos(ctx, "bp", 1, 2, -1).Val(), nil, int64(16))
	is(t, "BITPOS 1 2 -1 BYTE", c.BitPosSpan(ctx, "bp", 1, 2, -1, "byte").Val(), nil, int64(16))
	is(t, "BITPOS 1 7 15 BIT", c.BitPosSpan(ctx, "bp", 1, 7, 15, "bit").Val(), nil, int64(8))
	ok(t, "SET ff ff ff", c.Set(ctx, "ones", "\xff\xff\xff", 0).Err())
	is(t, "BITPOS 0 on all ones", c.BitPos(ctx, "ones", 0).Val(), nil, int64(24))
	is(t, "BITPOS 0 0 -1 on all ones", c.BitPos(ctx, "ones", 0, 0, -1).Val(), nil, int64(-1))
	is(t, "BITPOS 1 on missing", c.BitPos(ctx, "missing", 1).Val(), nil, int64(-1))
}

func TestKeyCommands(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client()
	c1 := dbClient(t, s, 1, "")

	// DEL, UNLINK, EXISTS, TOUCH, TYPE.
	ok(t, "MSET", c.MSet(ctx, "a", 1, "b", 2, "c", 3, "d", 4).Err())
	is(t, "EXISTS with duplicates", c.Exists(ctx, "a", "a", "missing", "b").Val(), nil, int64(3))
	is(t, "DEL with duplicates", c.Del(ctx, "a", "a", "missing").Val(), nil, int64(1))
	is(t, "UNLINK", c.Unlink(ctx, "b", "c", "missing").Val(), nil, int64(2))
	is(t, "TOUCH", c.Touch(ctx, "d", "d", "missing").Val(), nil, int64(2))
	is(t, "TYPE string", c.Type(ctx, "d").Val(), nil, "string")
	is(t, "TYPE missing", c.Type(ctx, "missing").Val(), nil, "none")
	is(t, "DBSIZE", c.DBSize(ctx).Val(), nil, int64(1))

	// The EXPIRE family, with NX/XX/GT/LT, and TTL/PTTL/EXPIRETIME/PERSIST.
	ok(t, "SET", c.Set(ctx, "e", "v", 0).Err())
	is(t, "TTL persistent", c.TTL(ctx, "e").Val(), nil, time.Duration(-1))
	is(t, "TTL missing", c.TTL(ctx, "missing").Val(), nil, time.Duration(-2))
	is(t, "PTTL missing", c.PTTL(ctx, "missing").Val(), nil, time.Duration(-2))
	is(t, "EXPIRETIME persistent", c.ExpireTime(ctx, "e").Val(), nil, time.Duration(-1))
	is(t, "EXPIRETIME missing", c.ExpireTime(ctx, "missing").Val(), nil, time.Duration(-2))
	is(t, "EXPIRE XX on a persistent key", c.ExpireXX(ctx, "e", 1000*time.Second).Val(), nil, false)
	is(t, "EXPIRE GT on a persistent key", c.ExpireGT(ctx, "e", 1000*time.Second).Val(), nil, false)
	is(t, "EXPIRE NX on a persistent key", c.ExpireNX(ctx, "e", 1000*time.Second).Val(), nil, true)
	is(t, "EXPIRE NX on a volatile key", c.ExpireNX(ctx, "e", 2000*time.Second).Val(), nil, false)
	is(t, "EXPIRE XX on a volatile key", c.ExpireXX(ctx, "e", 3000*time.Second).Val(), nil, true)
	is(t, "EXPIRE GT smaller", c.ExpireGT(ctx, "e", 2000*time.Second).Val(), nil, false)
	is(t, "EXPIRE GT larger", c.ExpireGT(ctx, "e", 4000*time.Second).Val(), nil, true)
	is(t, "EXPIRE LT larger", c.ExpireLT(ctx, "e", 5000*time.Second).Val(), nil, false)
	is(t, "EXPIRE LT smaller", c.ExpireLT(ctx, "e", 1000*time.Second).Val(), nil, true)
	within(t, "TTL", c.TTL(ctx, "e").Val(), nil, 990*time.Second, 1000*time.Second)
	is(t, "PERSIST", c.Persist(ctx, "e").Val(), nil, true)
	is(t, "PERSIST again", c.Persist(ctx, "e").Val(), nil, false)
	is(t, "EXPIRE LT on a persistent key", c.ExpireLT(ctx, "e", 1000*time.Second).Val(), nil, true)
	is(t, "PEXPIRE", c.PExpire(ctx, "e", 1500500*time.Millisecond).Val(), nil, true)
	within(t, "PTTL", c.PTTL(ctx, "e").Val(), nil, 1400*time.Second, 1500500*time.Millisecond)
	is(t, "EXPIREAT", c.ExpireAt(ctx, "e", farFuture).Val(), nil, true)
	is(t, "EXPIRETIME", c.ExpireTime(ctx, "e").Val(), nil, time.Duration(farFuture.Unix())*time.Second)
	is(t, "PEXPIREAT", c.PExpireAt(ctx, "e", farFuture.Add(777*time.Millisecond)).Val(), nil, true)
	is(t, "PEXPIRETIME", c.PExpireTime(ctx, "e").Val(), nil, time.Duration(farFuture.UnixMilli()+777)*time.Millisecond)
	is(t, "EXPIRE on a missing key", c.Expire(ctx, "missing", time.Second).Val(), nil, false)
	isErr(t, "EXPIRE NX XX", c.Do(ctx, "EXPIRE", "e", 10, "NX", "XX").Err(),
		"ERR NX and XX, GT or LT options at the same time are not compatible")
	isErr(t, "EXPIRE GT LT", c.Do(ctx, "EXPIRE", "e", 10, "GT", "LT").Err(),
		"ERR GT and LT options at the same time are not compatible")
	ok(t, "SET", c.Set(ctx, "neg", "v", 0).Err())
	is(t, "EXPIRE negative deletes", c.Do(ctx, "EXPIRE", "neg", -1).Val(), nil, any(int64(1)))
	is(t, "EXISTS after a negative EXPIRE", c.Exists(ctx, "neg").Val(), nil, int64(0))
	ok(t, "SET", c.Set(ctx, "past", "v", 0).Err())
	is(t, "EXPIREAT in the past", c.ExpireAt(ctx, "past", time.Unix(1, 0)).Val(), nil, true)
	_, err := c.Get(ctx, "past").Result()
	isNil(t, "GET after EXPIREAT in the past", err)

	// RENAME, RENAMENX.
	ok(t, "SET", c.Set(ctx, "src", "hello", 1000*time.Second).Err())
	is(t, "RENAME", c.Rename(ctx, "src", "dst").Val(), nil, "OK")
	is(t, "renamed value", c.Get(ctx, "dst").Val(), nil, "hello")
	within(t, "TTL moves with RENAME", c.TTL(ctx, "dst").Val(), nil, 990*time.Second, 1000*time.Second)
	is(t, "RENAME onto itself", c.Rename(ctx, "dst", "dst").Val(), nil, "OK")
	isErr(t, "RENAME missing", c.Rename(ctx, "src", "x").Err(), "ERR no such key")
	ok(t, "SET", c.Set(ctx, "other", "x", 0).Err())
	is(t, "RENAMENX onto an existing key", c.RenameNX(ctx, "dst", "other").Val(), nil, false)
	is(t, "RENAMENX", c.RenameNX(ctx, "dst", "dst2").Val(), nil, true)
	is(t, "EXISTS dst", c.Exists(ctx, "dst").Val(), nil, int64(0))

	// COPY (DB, REPLACE), MOVE, SWAPDB.
	is(t, "COPY", c.Copy(ctx, "dst2", "cp", 0, false).Val(), nil, int64(1))
	is(t, "copied value", c.Get(ctx, "cp").Val(), nil, "hello")
	within(t, "COPY keeps the TTL", c.TTL(ctx, "cp").Val(), nil, 990*time.Second, 1000*time.Second)
	is(t, "COPY onto an existing key", c.Copy(ctx, "other", "cp", 0, false).Val(), nil, int64(0))
	is(t, "COPY REPLACE", c.Copy(ctx, "other", "cp", 0, true).Val(), nil, int64(1))
	is(t, "replaced value", c.Get(ctx, "cp").Val(), nil, "x")
	is(t, "COPY DB 1", c.Copy(ctx, "other", "cp", 1, false).Val(), nil, int64(1))
	is(t, "copied into DB 1", c1.Get(ctx, "cp").Val(), nil, "x")
	isErr(t, "COPY onto itself", c.Copy(ctx, "other", "other", 0, true).Err(), "ERR source and destination objects are the same")
	is(t, "COPY missing", c.Copy(ctx, "missing", "cp2", 0, false).Val(), nil, int64(0))
	ok(t, "SET", c.Set(ctx, "mv", "moved", 0).Err())
	is(t, "MOVE", c.Move(ctx, "mv", 1).Val(), nil, true)
	is(t, "moved into DB 1", c1.Get(ctx, "mv").Val(), nil, "moved")
	is(t, "EXISTS after MOVE", c.Exists(ctx, "mv").Val(), nil, int64(0))
	ok(t, "SET", c.Set(ctx, "mv", "again", 0).Err())
	is(t, "MOVE onto an existing key", c.Move(ctx, "mv", 1).Val(), nil, false)
	isErr(t, "MOVE to the same DB", c.Move(ctx, "mv", 0).Err(), "ERR source and destination objects are the same")
	isErr(t, "MOVE to DB 16", c.Move(ctx, "mv", 16).Err(), "ERR DB index is out of range")
	size0, size1 := c.DBSize(ctx).Val(), c1.DBSize(ctx).Val()
	is(t, "SWAPDB", c.Do(ctx, "SWAPDB", 0, 1).Val(), nil, "OK")
	is(t, "DBSIZE 0 after SWAPDB", c.DBSize(ctx).Val(), nil, size1)
	is(t, "DBSIZE 1 after SWAPDB", c1.DBSize(ctx).Val(), nil, size0)
	is(t, "mv in DB 0 after SWAPDB", c.Get(ctx, "mv").Val(), nil, "moved")
	is(t, "SWAPDB back", c.Do(ctx, "SWAPDB", 1, 0).Val(), nil, "OK")
	isErr(t, "SWAPDB 0 16", c.Do(ctx, "SWAPDB", 0, 16).Err(), "ERR DB index is out of range")

	// KEYS, SCAN with MATCH/COUNT/TYPE, RANDOMKEY.
	ok(t, "FLUSHALL", c.FlushAll(ctx).Err())
	want := map[string]bool{}
	pipe := c.Pipeline()
	for i := 0; i < 150; i++ {
		k := fmt.Sprintf("scan:%d", i)
		want[k] = true
		pipe.Set(ctx, k, i, 0)
		pipe.Set(ctx, fmt.Sprintf("other:%d", i), i, 0)
	}
	_, err = pipe.Exec(ctx)
	ok(t, "pipelined SETs", err)
	keys, err := c.Keys(ctx, "scan:1?").Result()
	ok(t, "KEYS", err)
	slices.Sort(keys)
	if want := []string{"scan:10", "scan:11", "scan:12", "scan:13", "scan:14", "scan:15", "scan:16", "scan:17", "scan:18", "scan:19"}; !slices.Equal(keys, want) {
		t.Fatalf("KEYS scan:1? = %v, want %v", keys, want)
	}
	is(t, "KEYS * count", len(c.Keys(ctx, "*").Val()), nil, 300)
	// A full SCAN iteration returns every key that was there throughout,
	// possibly more than once, and nothing that does not match.
	got := map[string]bool{}
	calls := 0
	for cursor := uint64(0); ; {
		page, next, err := c.Scan(ctx, cursor, "scan:*", 7).Result()
		ok(t, "SCAN", err)
		calls++
		for _, k := range page {
			if !strings.HasPrefix(k, "scan:") {
				t.Fatalf("SCAN MATCH scan:* returned %q", k)
			}
			got[k] = true
		}
		if cursor = next; cursor == 0 {
			break
		}
		if calls > 10000 {
			t.Fatal("SCAN did not finish in 10000 calls")
		}
	}
	if len(got) != len(want) {
		t.Fatalf("SCAN MATCH scan:* COUNT 7 found %d keys, want %d", len(got), len(want))
	}
	it := c.Scan(ctx, 0, "other:*", 50).Iterator()
	nOther := 0
	for it.Next(ctx) {
		nOther++
	}
	ok(t, "SCAN iterator", it.Err())
	if nOther < 150 {
		t.Fatalf("SCAN iterator over other:* saw %d keys, want at least 150", nOther)
	}
	strs, _, err := c.ScanType(ctx, 0, "*", 1000, "string").Result()
	ok(t, "SCAN TYPE string", err)
	if len(strs) == 0 {
		t.Fatal("SCAN 0 COUNT 1000 TYPE string returned no keys")
	}
	nList := 0
	it = c.ScanType(ctx, 0, "", 100, "list").Iterator()
	for it.Next(ctx) {
		nList++
	}
	is(t, "keys of TYPE list", nList, it.Err(), 0)
	rk, err := c.RandomKey(ctx).Result()
	ok(t, "RANDOMKEY", err)
	if !strings.HasPrefix(rk, "scan:") && !strings.HasPrefix(rk, "other:") {
		t.Fatalf("RANDOMKEY = %q", rk)
	}

	// DBSIZE, FLUSHDB, FLUSHALL, OBJECT.
	ok(t, "SET in DB 1", c1.Set(ctx, "k1", "v", 0).Err())
	is(t, "DBSIZE", c.DBSize(ctx).Val(), nil, int64(300))
	ok(t, "FLUSHDB", c.FlushDB(ctx).Err())
	is(t, "DBSIZE after FLUSHDB", c.DBSize(ctx).Val(), nil, int64(0))
	is(t, "DB 1 untouched by FLUSHDB of DB 0", c1.Get(ctx, "k1").Val(), nil, "v")
	_, err = c.RandomKey(ctx).Result()
	isNil(t, "RANDOMKEY on an empty database", err)
	ok(t, "FLUSHALL", c.FlushAll(ctx).Err())
	is(t, "DBSIZE 1 after FLUSHALL", c1.DBSize(ctx).Val(), nil, int64(0))
	ok(t, "SET", c.Set(ctx, "int", 12345, 0).Err())
	ok(t, "SET", c.Set(ctx, "str", "hello", 0).Err())
	ok(t, "SET", c.Set(ctx, "long", strings.Repeat("x", 45), 0).Err())
	is(t, "OBJECT ENCODING int", c.ObjectEncoding(ctx, "int").Val(), nil, "int")
	is(t, "OBJECT ENCODING embstr", c.ObjectEncoding(ctx, "str").Val(), nil, "embstr")
	is(t, "OBJECT ENCODING raw", c.ObjectEncoding(ctx, "long").Val(), nil, "raw")
	_, err = c.ObjectEncoding(ctx, "missing").Result()
	isNil(t, "OBJECT ENCODING missing", err)
	is(t, "OBJECT REFCOUNT", c.ObjectRefCount(ctx, "str").Val(), nil, int64(1))
	idle, err := c.ObjectIdleTime(ctx, "str").Result()
	within(t, "OBJECT IDLETIME", idle, err, 0, 10*time.Second)
}

func TestConnectionCommands(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client()

	is(t, "PING", c.Ping(ctx).Val(), nil, "PONG")
	is(t, "ECHO", c.Echo(ctx, "hello world").Val(), nil, "hello world")
	now, err := c.Time(ctx).Result()
	within(t, "TIME skew", time.Since(now).Abs(), err, 0, 5*time.Second)
	isErr(t, "unknown command", c.Do(ctx, "NOSUCH", "a").Err(), "ERR unknown command 'NOSUCH', with args beginning with: 'a' ")
	isErr(t, "wrong arity", c.Do(ctx, "GET").Err(), "ERR wrong number of arguments for 'get' command")

	// Connection state lives on one connection: use a dedicated one.
	cn := c.Conn()
	defer cn.Close()
	_, err = cn.ClientGetName(ctx).Result()
	isNil(t, "CLIENT GETNAME before SETNAME", err)
	ok(t, "CLIENT SETNAME", cn.ClientSetName(ctx, "tester").Err())
	is(t, "CLIENT GETNAME", cn.ClientGetName(ctx).Val(), nil, "tester")
	id, err := cn.ClientID(ctx).Result()
	ok(t, "CLIENT ID", err)
	if id <= 0 {
		t.Fatalf("CLIENT ID = %d", id)
	}
	ok(t, "SELECT 4", cn.Select(ctx, 4).Err())
	ok(t, "SET in DB 4", cn.Set(ctx, "where", "db4", 0).Err())
	_, err = c.Get(ctx, "where").Result()
	isNil(t, "key of DB 4 seen from DB 0", err)
	isErr(t, "SELECT 16", cn.Select(ctx, 16).Err(), "ERR DB index is out of range")
	is(t, "still on DB 4", cn.Get(ctx, "where").Val(), nil, "db4")

	// MULTI/EXEC through TxPipelined; a runtime error inside EXEC is one
	// element of the reply and the other commands still run.
	ok(t, "SET", c.Set(ctx, "str", "abc", 0).Err())
	cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "t1", "1", 0)
		p.Incr(ctx, "str")
		p.IncrBy(ctx, "t1", 9)
		return nil
	})
	if err == nil || len(cmds) != 3 {
		t.Fatalf("EXEC with a failing INCR: err %v, %d replies", err, len(cmds))
	}
	isErr(t, "INCR inside EXEC", cmds[1].Err(), "ERR value is not an integer or out of range")
	is(t, "INCRBY after the failure", cmds[2].(*redis.IntCmd).Val(), cmds[2].Err(), int64(10))
	// A queuing error aborts the whole block.
	_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "t2", "1", 0)
		p.Do(ctx, "GET")
		return nil
	})
	isErr(t, "EXEC after a queuing error", err, "EXECABORT Transaction discarded because of previous errors.")
	is(t, "EXISTS t2 after EXECABORT", c.Exists(ctx, "t2").Val(), nil, int64(0))

	// WATCH: optimistic locking, aborted by another client's write.
	ok(t, "SET", c.Set(ctx, "w", "1", 0).Err())
	other := dbClient(t, s, 0, "")
	err = c.Watch(ctx, func(tx *redis.Tx) error {
		if err := other.Set(ctx, "w", "changed", 0).Err(); err != nil {
			return err
		}
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "w", "mine", 0)
			return nil
		})
		return err
	}, "w")
	if !errors.Is(err, redis.TxFailedErr) {
		t.Fatalf("EXEC after a watched key changed: %v, want redis.TxFailedErr", err)
	}
	is(t, "watched key", c.Get(ctx, "w").Val(), nil, "changed")
	err = c.Watch(ctx, func(tx *redis.Tx) error {
		n, err := tx.Get(ctx, "cnt").Int()
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "cnt", n+1, 0)
			return nil
		})
		return err
	}, "cnt")
	ok(t, "WATCH/MULTI/EXEC without interference", err)
	is(t, "cnt", c.Get(ctx, "cnt").Val(), nil, "1")
}

func TestPipeline1000(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client()

	const n = 1000
	pipe := c.Pipeline()
	sets := make([]*redis.StatusCmd, 0, n/4)
	incrs := make([]*redis.IntCmd, 0, n/4)
	gets := make([]*redis.StringCmd, 0, n/4)
	appends := make([]*redis.IntCmd, 0, n/4)
	for i := 0; i < n/4; i++ {
		sets = append(sets, pipe.Set(ctx, fmt.Sprintf("p:%d", i), fmt.Sprintf("v%d", i), 0))
		incrs = append(incrs, pipe.Incr(ctx, "p:counter"))
		gets = append(gets, pipe.Get(ctx, fmt.Sprintf("p:%d", i)))
		appends = append(appends, pipe.Append(ctx, "p:log", "x"))
	}
	cmds, err := pipe.Exec(ctx)
	ok(t, "pipeline", err)
	if len(cmds) != n {
		t.Fatalf("pipeline returned %d replies, want %d", len(cmds), n)
	}
	for i := 0; i < n/4; i++ {
		is(t, fmt.Sprintf("SET #%d", i), sets[i].Val(), sets[i].Err(), "OK")
		is(t, fmt.Sprintf("INCR #%d", i), incrs[i].Val(), incrs[i].Err(), int64(i+1))
		is(t, fmt.Sprintf("GET #%d", i), gets[i].Val(), gets[i].Err(), fmt.Sprintf("v%d", i))
		is(t, fmt.Sprintf("APPEND #%d", i), appends[i].Val(), appends[i].Err(), int64(i+1))
	}
	is(t, "DBSIZE after the pipeline", c.DBSize(ctx).Val(), nil, int64(n/4+2))
	is(t, "counter after the pipeline", c.Get(ctx, "p:counter").Val(), nil, fmt.Sprint(n/4))
}

func TestRestartPersistence(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client()
	c3 := dbClient(t, s, 3, "")

	bin := []byte{0, 1, 2, '\r', '\n', 0xff}
	ok(t, "MSET", c.MSet(ctx, "plain", "v", "bin", bin, "gone", "x").Err())
	ok(t, "DEL", c.Del(ctx, "gone").Err())
	ok(t, "INCRBY", c.IncrBy(ctx, "counter", 41).Err())
	ok(t, "INCR", c.Incr(ctx, "counter").Err())
	ok(t, "INCRBYFLOAT", c.IncrByFloat(ctx, "float", 2.5).Err())
	ok(t, "APPEND", c.Append(ctx, "plain", "+more").Err())
	ok(t, "SETRANGE", c.SetRange(ctx, "padded", 4, "z").Err())
	ok(t, "SETBIT", c.SetBit(ctx, "bits", 9, 1).Err())
	ok(t, "SET EX 1000", c.Set(ctx, "ttl", "v", 1000*time.Second).Err())
	ok(t, "SET EXAT", c.SetArgs(ctx, "exat", "v", redis.SetArgs{ExpireAt: farFuture}).Err())
	ok(t, "SET then PERSIST", c.Set(ctx, "persisted", "v", 1000*time.Second).Err())
	ok(t, "PERSIST", c.Persist(ctx, "persisted").Err())
	ok(t, "SET", c.Set(ctx, "renamed-from", "r", 0).Err())
	ok(t, "RENAME", c.Rename(ctx, "renamed-from", "renamed-to").Err())
	ok(t, "COPY DB 3", c.Copy(ctx, "plain", "copied", 3, false).Err())
	ok(t, "SET in DB 3", c3.Set(ctx, "db3", "three", 0).Err())
	ok(t, "SET", c.Set(ctx, "moved", "m", 0).Err())
	ok(t, "MOVE", c.Move(ctx, "moved", 3).Err())
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "tx:a", "1", 0)
		p.Set(ctx, "tx:b", "2", 0)
		return nil
	})
	ok(t, "MULTI/EXEC", err)
	// A key that expires shortly after it is written: it must be gone after
	// the restart (expiry is an absolute time, not a TTL restarted at boot).
	shortAt := time.Now().Add(300 * time.Millisecond).Truncate(time.Millisecond)
	ok(t, "SET PXAT soon", c.SetArgs(ctx, "short", "v", redis.SetArgs{ExpireAt: shortAt}).Err())
	if time.Now().Before(shortAt.Add(-100 * time.Millisecond)) {
		is(t, "short-lived key before the restart", c.Exists(ctx, "short").Val(), nil, int64(1))
	}
	ttlAt, err := c.PExpireTime(ctx, "ttl").Result()
	ok(t, "PEXPIRETIME ttl", err)
	wantSize0, wantSize3 := c.DBSize(ctx).Val(), c3.DBSize(ctx).Val()

	ok(t, "SIGTERM", s.stop())
	// Wait for the instant the short key expires (a clock condition, not
	// synchronisation with the server): a restart faster than 300 ms must
	// not make the test pass or fail by luck.
	if d := time.Until(shortAt); d > 0 {
		time.Sleep(d + 5*time.Millisecond)
	}
	s = startServer(t, dir)
	c = s.client()
	c3 = dbClient(t, s, 3, "")

	is(t, "plain", c.Get(ctx, "plain").Val(), nil, "v+more")
	is(t, "bin", c.Get(ctx, "bin").Val(), nil, string(bin))
	is(t, "EXISTS deleted key", c.Exists(ctx, "gone").Val(), nil, int64(0))
	is(t, "counter", c.Get(ctx, "counter").Val(), nil, "42")
	is(t, "float", c.Get(ctx, "float").Val(), nil, "2.5")
	is(t, "padded", c.Get(ctx, "padded").Val(), nil, "\x00\x00\x00\x00z")
	is(t, "GETBIT 9", c.GetBit(ctx, "bits", 9).Val(), nil, int64(1))
	d, err := c.PExpireTime(ctx, "ttl").Result()
	is(t, "PEXPIRETIME after restart (absolute)", d, err, ttlAt)
	within(t, "TTL after restart", c.TTL(ctx, "ttl").Val(), nil, 900*time.Second, 1000*time.Second)
	is(t, "EXPIRETIME after restart", c.ExpireTime(ctx, "exat").Val(), nil, time.Duration(farFuture.Unix())*time.Second)
	is(t, "TTL of a PERSISTed key", c.TTL(ctx, "persisted").Val(), nil, time.Duration(-1))
	is(t, "RENAME destination", c.Get(ctx, "renamed-to").Val(), nil, "r")
	is(t, "RENAME source", c.Exists(ctx, "renamed-from").Val(), nil, int64(0))
	is(t, "COPY destination in DB 3", c3.Get(ctx, "copied").Val(), nil, "v+more")
	is(t, "DB 3", c3.Get(ctx, "db3").Val(), nil, "three")
	is(t, "MOVE destination in DB 3", c3.Get(ctx, "moved").Val(), nil, "m")
	is(t, "MOVE source", c.Exists(ctx, "moved").Val(), nil, int64(0))
	is(t, "EXEC tx:a", c.Get(ctx, "tx:a").Val(), nil, "1")
	is(t, "EXEC tx:b", c.Get(ctx, "tx:b").Val(), nil, "2")
	is(t, "EXISTS short-lived key after the restart", c.Exists(ctx, "short").Val(), nil, int64(0))
	_, err = c.Get(ctx, "short").Result()
	isNil(t, "GET short-lived key after the restart", err)
	keys, err := c.Keys(ctx, "short").Result()
	is(t, "KEYS short", len(keys), err, 0)
	is(t, "DBSIZE 3 after the restart", c3.DBSize(ctx).Val(), nil, wantSize3)
	if got := c.DBSize(ctx).Val(); got != wantSize0 && got != wantSize0-1 {
		t.Fatalf("DBSIZE 0 after the restart = %d, want %d (or %d without the expired key)", got, wantSize0, wantSize0-1)
	}
	// And the restarted server takes writes that survive another restart.
	ok(t, "SET after restart", c.Set(ctx, "second", "life", 0).Err())
	ok(t, "SIGTERM", s.stop())
	s = startServer(t, dir)
	c = s.client()
	is(t, "second", c.Get(ctx, "second").Val(), nil, "life")
	is(t, "plain after two restarts", c.Get(ctx, "plain").Val(), nil, "v+more")
}

func TestAuth(t *testing.T) {
	s := startServer(t, t.TempDir(), "--requirepass", "pw")
	const noauth = "NOAUTH Authentication required."
	const wrongpass = "WRONGPASS invalid username-password pair or user is disabled."

	c := dbClient(t, s, 0, "")
	cn := c.Conn()
	defer cn.Close()
	isErr(t, "GET before AUTH", cn.Get(ctx, "k").Err(), noauth)
	isErr(t, "SET before AUTH", cn.Set(ctx, "k", "v", 0).Err(), noauth)
	is(t, "PING before AUTH is refused too", cn.Ping(ctx).Err() != nil, nil, true)
	// Redis rejects EXEC through execCommandAbort, whatever the reason.
	isErr(t, "EXEC before AUTH", cn.Do(ctx, "EXEC").Err(), "EXECABORT Transaction discarded because of: "+noauth)
	isErr(t, "AUTH bad", cn.Auth(ctx, "bad").Err(), wrongpass)
	isErr(t, "AUTH default bad", cn.AuthACL(ctx, "default", "bad").Err(), wrongpass)
	isErr(t, "AUTH other pw", cn.AuthACL(ctx, "other", "pw").Err(), wrongpass)
	isErr(t, "AUTH default:bad", cn.Auth(ctx, "default:bad").Err(), wrongpass)
	isErr(t, "GET after failed AUTHs", cn.Get(ctx, "k").Err(), noauth)
	is(t, "AUTH pw", cn.Auth(ctx, "pw").Val(), nil, "OK")
	ok(t, "SET after AUTH", cn.Set(ctx, "k", "v", 0).Err())
	is(t, "GET after AUTH", cn.Get(ctx, "k").Val(), nil, "v")
	// A failed AUTH on an authenticated connection does not log it out in
	// Redis 7 (the connection keeps its user).
	isErr(t, "AUTH bad after success", cn.Auth(ctx, "bad").Err(), wrongpass)
	is(t, "GET after a later failed AUTH", cn.Get(ctx, "k").Val(), nil, "v")

	cn2 := c.Conn()
	defer cn2.Close()
	isErr(t, "second connection before AUTH", cn2.Get(ctx, "k").Err(), noauth)
	is(t, "AUTH default pw", cn2.AuthACL(ctx, "default", "pw").Val(), nil, "OK")
	is(t, "GET after AUTH default pw", cn2.Get(ctx, "k").Val(), nil, "v")

	cn3 := c.Conn()
	defer cn3.Close()
	isErr(t, "third connection before AUTH", cn3.Get(ctx, "k").Err(), noauth)
	is(t, "AUTH default:pw", cn3.Auth(ctx, "default:pw").Val(), nil, "OK")
	is(t, "GET after AUTH default:pw", cn3.Get(ctx, "k").Val(), nil, "v")

	// A client configured with the password authenticates by itself.
	good := dbClient(t, s, 0, "pw")
	is(t, "client with Password", good.Get(ctx, "k").Val(), nil, "v")
	bad := dbClient(t, s, 0, "nope")
	if err := bad.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Fatalf("client with a wrong Password: PING error %v, want WRONGPASS", err)
	}
}

func TestSelectIsolation(t *testing.T) {
	s := startServer(t, t.TempDir())
	clients := make([]*redis.Client, 16)
	for db := range clients {
		clients[db] = dbClient(t, s, db, "")
	}
	for db, c := range clients {
		ok(t, "SET", c.Set(ctx, "same-key", fmt.Sprintf("db%d", db), 0).Err())
		for i := 0; i < db; i++ {
			ok(t, "SET", c.Set(ctx, fmt.Sprintf("extra:%d", i), i, 0).Err())
		}
	}
	for db, c := range clients {
		is(t, fmt.Sprintf("GET in DB %d", db), c.Get(ctx, "same-key").Val(), nil, fmt.Sprintf("db%d", db))
		is(t, fmt.Sprintf("DBSIZE of DB %d", db), c.DBSize(ctx).Val(), nil, int64(db+1))
		is(t, fmt.Sprintf("KEYS extra:* in DB %d", db), len(c.Keys(ctx, "extra:*").Val()), nil, db)
	}
	ok(t, "DEL in DB 5", clients[5].Del(ctx, "same-key").Err())
	ok(t, "FLUSHDB in DB 7", clients[7].FlushDB(ctx).Err())
	ok(t, "EXPIRE in DB 9", clients[9].Expire(ctx, "same-key", 1000*time.Second).Err())
	for db, c := range clients {
		wantExists := int64(1)
		if db == 5 || db == 7 {
			wantExists = 0
		}
		is(t, fmt.Sprintf("EXISTS in DB %d", db), c.Exists(ctx, "same-key").Val(), nil, wantExists)
		wantTTL := time.Duration(-1)
		switch db {
		case 5, 7:
			wantTTL = -2
		case 9:
			continue
		}
		is(t, fmt.Sprintf("TTL in DB %d", db), c.TTL(ctx, "same-key").Val(), nil, wantTTL)
	}
	// One connection switching databases sees each in turn.
	cn := clients[0].Conn()
	defer cn.Close()
	for _, db := range []int{3, 15, 0, 12} {
		ok(t, "SELECT", cn.Select(ctx, db).Err())
		is(t, fmt.Sprintf("GET after SELECT %d", db), cn.Get(ctx, "same-key").Val(), nil, fmt.Sprintf("db%d", db))
	}
}

func TestLargeValue8MiB(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client()

	val := make([]byte, 8<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range val {
		val[i] = byte(rng.Uint32())
	}
	ok(t, "SET 8 MiB", c.Set(ctx, "big", val, 0).Err())
	check := func(c *redis.Client, when string) {
		t.Helper()
		got, err := c.Get(ctx, "big").Bytes()
		ok(t, "GET 8 MiB "+when, err)
		if !bytes.Equal(got, val) {
			t.Fatalf("GET 8 MiB %s: %d bytes back, equal %v", when, len(got), bytes.Equal(got, val))
		}
		is(t, "STRLEN "+when, c.StrLen(ctx, "big").Val(), nil, int64(len(val)))
		is(t, "GETRANGE of the tail "+when, c.GetRange(ctx, "big", -16, -1).Val(), nil, string(val[len(val)-16:]))
	}
	check(c, "")
	ok(t, "SIGTERM", s.stop())
	s = startServer(t, dir)
	check(s.client(), "after a restart")
}

// TestRequestBeyondLimits sends requests larger than Redis's limits on raw
// sockets: each gets Redis's protocol error and its connection is closed,
// while other clients keep working and no data is lost.
func TestRequestBeyondLimits(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client()
	ok(t, "MSET", c.MSet(ctx, "a", "1", "b", "2").Err())
	ok(t, "SET EX", c.Set(ctx, "t", "3", 1000*time.Second).Err())

	for _, tc := range []struct{ req, reply string }{
		{"*1\r\n$600000000\r\n", "-ERR Protocol error: invalid bulk length"},
		{"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870913\r\n", "-ERR Protocol error: invalid bulk length"},
		{"*2147483648\r\n", "-ERR Protocol error: invalid multibulk length"},
	} {
		nc, err := net.DialTimeout("tcp", s.Addr, 5*time.Second)
		ok(t, "dial", err)
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		_, err = nc.Write([]byte(tc.req))
		ok(t, "write", err)
		r := bufio.NewReader(nc)
		line, err := r.ReadString('\n')
		if err != nil || line != tc.reply+"\r\n" {
			nc.Close()
			t.Fatalf("request %q: reply %q (%v), want %q", tc.req, line, err, tc.reply)
		}
		rest, err := io.ReadAll(r)
		nc.Close()
		if err != nil || len(rest) != 0 {
			t.Fatalf("request %q: after the error, read %q and %v; want the connection closed", tc.req, rest, err)
		}
	}

	select {
	case err := <-s.done:
		t.Fatalf("server exited after oversized requests: %v\n%s", err, s.log.String())
	default:
	}
	vals, err := c.MGet(ctx, "a", "b", "t", "k").Result()
	ok(t, "MGET after the oversized requests", err)
	if fmt.Sprint(vals) != "[1 2 3 <nil>]" {
		t.Fatalf("MGET after the oversized requests = %v, want [1 2 3 <nil>]", vals)
	}
	within(t, "TTL after the oversized requests", c.TTL(ctx, "t").Val(), nil, 990*time.Second, 1000*time.Second)
	ok(t, "SET after the oversized requests", c.Set(ctx, "c", "4", 0).Err())
	is(t, "DBSIZE", c.DBSize(ctx).Val(), nil, int64(4))
	other := dbClient(t, s, 0, "")
	is(t, "a new client", other.Get(ctx, "c").Val(), nil, "4")
}
