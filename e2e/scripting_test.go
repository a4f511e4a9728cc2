package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Lua scripting against the real binary with go-redis. The replies and
// errors of many more cases are compared with redis-server 7.0 in
// testdata/diff/scripting.txt.

func TestScripting(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client()

	got, err := c.Eval(ctx, "return {KEYS[1], ARGV[1], 3.7, true, false, {ok='fine'}}", []string{"k"}, "a").Result()
	ok(t, "EVAL conversions", err)
	if want := []any{"k", "a", int64(3), int64(1), nil, "fine"}; !slices.Equal(got.([]any), want) {
		t.Fatalf("EVAL conversions: got %#v, want %#v", got, want)
	}
	isErr(t, "EVAL {err=...}", c.Eval(ctx, "return {err='MYERR custom'}", nil).Err(), "MYERR custom")
	isErr(t, "numkeys not a number", c.Do(ctx, "EVAL", "return 1", "x").Err(), "ERR value is not an integer or out of range")
	isErr(t, "numkeys too big", c.Do(ctx, "EVAL", "return 1", "2", "a").Err(), "ERR Number of keys can't be greater than number of args")
	isErr(t, "numkeys negative", c.Do(ctx, "EVAL", "return 1", "-1").Err(), "ERR Number of keys can't be negative")

	// redis.call and redis.pcall go through the command table.
	is(t, "redis.call SET", c.Eval(ctx, "return redis.call('set', KEYS[1], ARGV[1])", []string{"s"}, "v").Val(), nil, any("OK"))
	is(t, "GET after script", c.Get(ctx, "s").Val(), nil, "v")
	err = c.Eval(ctx, "return redis.call('incr', 's')", nil).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR value is not an integer or out of range script: ") {
		t.Fatalf("redis.call error: %v", err)
	}
	is(t, "redis.pcall error as a value", c.Eval(ctx, "return redis.pcall('incr', 's')['err']", nil).Val(), nil,
		any("ERR value is not an integer or out of range"))
	err = c.Eval(ctx, "return redis.call('multi')", nil).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR This Redis command is not allowed from script") {
		t.Fatalf("noscript command: %v", err)
	}

	// The script cache.
	sha, err := c.ScriptLoad(ctx, "return redis.call('incrby', KEYS[1], ARGV[1])").Result()
	ok(t, "SCRIPT LOAD", err)
	is(t, "EVALSHA", c.EvalSha(ctx, sha, []string{"n"}, 5).Val(), nil, any(int64(5)))
	is(t, "EVALSHA upper case", c.EvalSha(ctx, strings.ToUpper(sha), []string{"n"}, 5).Val(), nil, any(int64(10)))
	isErr(t, "EVALSHA unknown", c.EvalSha(ctx, strings.Repeat("a", 40), nil).Err(), "NOSCRIPT No matching script. Please use EVAL.")
	ok(t, "SCRIPT FLUSH", c.ScriptFlush(ctx).Err())
	isErr(t, "EVALSHA after FLUSH", c.EvalSha(ctx, sha, []string{"n"}, 5).Err(), "NOSCRIPT No matching script. Please use EVAL.")
	// go-redis's Run tries EVALSHA, then EVAL on NOSCRIPT.
	script := redis.NewScript("return ARGV[1] .. '!'")
	is(t, "Script.Run", script.Run(ctx, c, nil, "hi").Val(), nil, any("hi!"))
	is(t, "Script.Run cached", script.EvalSha(ctx, c, nil, "yo").Val(), nil, any("yo!"))
	isErr(t, "SCRIPT KILL", c.ScriptKill(ctx).Err(), "NOTBUSY No scripts in execution right now.")

	// A script error does not roll back what ran before it.
	err = c.Eval(ctx, "redis.call('incr', 'cnt'); redis.call('nosuch'); redis.call('incr', 'cnt')", nil).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR Unknown Redis command called from script") {
		t.Fatalf("failing script: %v", err)
	}
	is(t, "cnt after the failing script", c.Get(ctx, "cnt").Val(), nil, "1")

	// EVAL inside MULTI runs at EXEC.
	cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Eval(ctx, "return redis.call('incr', 'cnt')", nil)
		p.EvalRO(ctx, "return redis.call('get', 'cnt')", []string{"cnt"})
		return nil
	})
	ok(t, "MULTI with EVAL", err)
	is(t, "EVAL in EXEC", cmds[0].(*redis.Cmd).Val(), nil, any(int64(2)))
	is(t, "EVAL_RO in EXEC", cmds[1].(*redis.Cmd).Val(), nil, any("2"))
	err = c.EvalRO(ctx, "return redis.call('del', 'cnt')", []string{"cnt"}).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR Write commands are not allowed from read-only scripts.") {
		t.Fatalf("EVAL_RO write: %v", err)
	}
}

// A script's writes are acknowledged only once durable and survive kill -9.
func TestScriptWritesSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client()
	const body = `
for i = 1, tonumber(ARGV[1]) do
  redis.call('rpush', KEYS[1], i)
  redis.call('hset', KEYS[2], 'f' .. i, i)
end
redis.call('select', 2)
redis.call('set', 'in-db2', 'yes')
return redis.call('llen', KEYS[1])`
	for range 20 {
		ok(t, "EVAL", c.Eval(ctx, body, []string{"list", "hash"}, 50).Err())
	}
	err := c.Eval(ctx, "redis.call('set', 'before-error', '1'); return redis.call('nosuch')", nil).Err()
	if err == nil {
		t.Fatal("failing script succeeded")
	}
	s.kill()

	s = startServer(t, dir)
	c = s.client()
	is(t, "LLEN after restart", c.LLen(ctx, "list").Val(), nil, int64(1000))
	is(t, "HLEN after restart", c.HLen(ctx, "hash").Val(), nil, int64(50))
	is(t, "write before a script error", c.Get(ctx, "before-error").Val(), nil, "1")
	c2 := dbClient(t, s, 2, "")
	is(t, "SELECT inside the script", c2.Get(ctx, "in-db2").Val(), nil, "yes")
	is(t, "db 0 untouched by the script's SELECT", c.Exists(ctx, "in-db2").Val(), nil, int64(0))
	for i, v := range c.LRange(ctx, "list", 0, 4).Val() {
		if v != fmt.Sprint(i+1) {
			t.Fatalf("list[%d] = %q", i, v)
		}
	}
}
