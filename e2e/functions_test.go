package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestFunctionsGoRedis drives the FUNCTION family and FCALL through
// go-redis's typed API, as an application would, then restarts the server
// (a clean stop) and checks the libraries came back.
func TestFunctionsGoRedis(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client()
	const lib = `#!lua name=mylib
local function incrby(keys, args)
  return redis.call('INCRBY', keys[1], args[1])
end
redis.register_function('my_incrby', incrby)
redis.register_function{function_name='my_get', callback=function(keys) return redis.call('GET', keys[1]) end,
  flags={'no-writes'}, description='reads a key'}
`
	if name, err := c.FunctionLoad(ctx, lib).Result(); err != nil || name != "mylib" {
		t.Fatalf("FUNCTION LOAD: %q %v", name, err)
	}
	if err := c.FunctionLoad(ctx, lib).Err(); err == nil || err.Error() != "ERR Library 'mylib' already exists" {
		t.Fatalf("second FUNCTION LOAD: %v", err)
	}
	if err := c.FunctionLoadReplace(ctx, lib).Err(); err != nil {
		t.Fatalf("FUNCTION LOAD REPLACE: %v", err)
	}
	if n, err := c.FCall(ctx, "my_incrby", []string{"counter"}, 5).Int64(); err != nil || n != 5 {
		t.Fatalf("FCALL my_incrby: %d %v", n, err)
	}
	if v, err := c.FCallRo(ctx, "my_get", []string{"counter"}).Text(); err != nil || v != "5" {
		t.Fatalf("FCALL_RO my_get: %q %v", v, err)
	}
	if err := c.FCallRo(ctx, "my_incrby", []string{"counter"}, 1).Err(); err == nil || err.Error() != "ERR Can not execute a script with write flag using *_ro command." {
		t.Fatalf("FCALL_RO of a writing function: %v", err)
	}
	if err := c.FCall(ctx, "nosuch", nil).Err(); err == nil || err.Error() != "ERR Function not found" {
		t.Fatalf("FCALL nosuch: %v", err)
	}
	libs, err := c.FunctionList(ctx, redis.FunctionListQuery{WithCode: true}).Result()
	if err != nil || len(libs) != 1 || libs[0].Name != "mylib" || libs[0].Engine != "LUA" || libs[0].Code != lib || len(libs[0].Functions) != 2 {
		t.Fatalf("FUNCTION LIST: %+v %v", libs, err)
	}
	if f := libs[0].Functions[0]; f.Name != "my_get" || f.Description != "reads a key" || !slices.Equal(f.Flags, []string{"no-writes"}) {
		t.Fatalf("FUNCTION LIST my_get: %+v", f)
	}
	if libs, err := c.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: "other*"}).Result(); err != nil || len(libs) != 0 {
		t.Fatalf("FUNCTION LIST LIBRARYNAME other*: %+v %v", libs, err)
	}
	st, err := c.FunctionStats(ctx).Result()
	if err != nil || st.Running() || len(st.Engines) != 1 || st.Engines[0].Language != "LUA" || st.Engines[0].LibrariesCount != 1 || st.Engines[0].FunctionsCount != 2 {
		t.Fatalf("FUNCTION STATS: %+v %v", st, err)
	}
	dump, err := c.FunctionDump(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.FunctionFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.FCall(ctx, "my_incrby", []string{"counter"}, 1).Err(); err == nil {
		t.Fatal("FCALL after FUNCTION FLUSH ran")
	}
	if err := c.FunctionRestore(ctx, dump).Err(); err != nil {
		t.Fatalf("FUNCTION RESTORE: %v", err)
	}
	if n, err := c.FCall(ctx, "MY_INCRBY", []string{"counter"}, 2).Int64(); err != nil || n != 7 {
		t.Fatalf("FCALL after RESTORE: %d %v", n, err)
	}
	// The dump restores on redis-server too (the payload is Redis's format).
	r := redis.NewClient(&redis.Options{Addr: startRedis(t), DisableIdentity: true})
	defer r.Close()
	r.FunctionFlush(ctx)
	if err := r.FunctionRestore(ctx, dump).Err(); err != nil {
		t.Fatalf("redis-server: FUNCTION RESTORE of Persimmon's dump: %v", err)
	}
	rlibs, err := r.FunctionList(ctx, redis.FunctionListQuery{WithCode: true}).Result()
	if err != nil || len(rlibs) != 1 || rlibs[0].Code != lib {
		t.Fatalf("redis-server: FUNCTION LIST after RESTORE: %+v %v", rlibs, err)
	}
	rdump, _ := r.FunctionDump(ctx).Result()
	r.FunctionFlush(ctx)
	if rdump != dump {
		t.Fatalf("redis-server's dump of the same library differs:\n%q\n%q", rdump, dump)
	}
	if err := c.FunctionDelete(ctx, "mylib").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.FunctionDelete(ctx, "mylib").Err(); err == nil || err.Error() != "ERR Library not found" {
		t.Fatalf("second FUNCTION DELETE: %v", err)
	}
	if err := c.FunctionLoad(ctx, lib).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	s = startServer(t, dir)
	c = s.client()
	if n, err := c.FCall(ctx, "my_incrby", []string{"counter"}, 3).Int64(); err != nil || n != 10 {
		t.Fatalf("FCALL after a restart: %d %v", n, err)
	}
}

// TestBusyFunction: a function that never ends makes the server busy with
// the BUSY text that names FUNCTION KILL; FUNCTION STATS reports it;
// SCRIPT KILL refuses it; FUNCTION KILL stops it.
func TestBusyFunction(t *testing.T) {
	for _, io := range []string{"loop", "goroutine"} {
		t.Run(io, func(t *testing.T) {
			s := startServer(t, t.TempDir(), "--io", io)
			admin := s.client()
			if err := admin.ConfigSet(ctx, "busy-reply-threshold", "50").Err(); err != nil {
				t.Fatal(err)
			}
			if err := admin.FunctionLoad(ctx, "#!lua name=busy\nredis.register_function('spin', function() local a = 1 while true do a = a + 1 end end)").Err(); err != nil {
				t.Fatal(err)
			}
			runner := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DisableIdentity: true, ReadTimeout: -1})
			defer runner.Close()
			callErr := make(chan error, 1)
			go func() { callErr <- runner.FCall(ctx, "spin", nil).Err() }()
			waitBusy(t, admin)
			const busy = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
			if err := admin.Get(ctx, "k").Err(); err == nil || err.Error() != busy {
				t.Fatalf("GET while a function is busy: %v", err)
			}
			st, err := admin.FunctionStats(ctx).Result()
			rs, running := st.RunningScript()
			if err != nil || !running || rs.Name != "spin" || strings.Join(rs.Command, " ") != "fcall spin 0" {
				t.Fatalf("FUNCTION STATS while busy: %+v %v", rs, err)
			}
			if err := admin.Do(ctx, "SCRIPT", "KILL").Err(); err == nil || err.Error() != busy {
				t.Fatalf("SCRIPT KILL of a function: %v", err)
			}
			if err := admin.FunctionKill(ctx).Err(); err != nil {
				t.Fatalf("FUNCTION KILL: %v", err)
			}
			if err := <-callErr; err == nil || !strings.HasPrefix(err.Error(), "ERR Script killed by user with SCRIPT KILL...") {
				t.Fatalf("the killed function's caller got %v", err)
			}
			if err := admin.Ping(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if err := admin.FunctionKill(ctx).Err(); err == nil || err.Error() != "NOTBUSY No scripts in execution right now." {
				t.Fatalf("FUNCTION KILL with nothing running: %v", err)
			}
			// An EVAL is not stopped by FUNCTION KILL.
			go func() { callErr <- runner.Eval(ctx, "while true do end", nil).Err() }()
			waitBusy(t, admin)
			const busyEval = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
			if err := admin.FunctionKill(ctx).Err(); err == nil || err.Error() != busyEval {
				t.Fatalf("FUNCTION KILL of an EVAL: %v", err)
			}
			if err := admin.FunctionStats(ctx).Err(); err == nil || err.Error() != busyEval {
				t.Fatalf("FUNCTION STATS while an EVAL is busy: %v", err)
			}
			if err := admin.ScriptKill(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			<-callErr
		})
	}
}

// fnState is what the crash test's model tracks: the libraries loaded and
// the counter the functions increment.
type fnState struct {
	libs    map[string]bool
	counter int64
}

// fnOps is the crash test's fixed sequence of commands: library loads,
// deletes of an earlier library, and FCALLs of lib0's inc (never deleted).
func fnOp(i int) []any {
	switch {
	case i == 0 || i%3 == 1:
		return []any{"FUNCTION", "LOAD", fmt.Sprintf("#!lua name=lib%d\nredis.register_function('inc%d', function(keys) return redis.call('INCR', keys[1]) end)", i, i)}
	case i%6 == 2:
		return []any{"FUNCTION", "DELETE", fmt.Sprintf("lib%d", i-1)}
	}
	return []any{"FCALL", "inc0", "1", "counter"}
}

func applyFnOp(st fnState, i int) fnState {
	next := fnState{libs: map[string]bool{}, counter: st.counter}
	for k := range st.libs {
		next.libs[k] = true
	}
	op := fnOp(i)
	switch op[1] {
	case "LOAD":
		next.libs[fmt.Sprintf("lib%d", i)] = true
	case "DELETE":
		delete(next.libs, op[2].(string))
	default:
		next.counter++
	}
	return next
}

// TestCrashFunctions kills the server (SIGKILL) while a client loads and
// deletes libraries and calls a function that writes, restarts it on the
// same directory and checks that the libraries and the counter are what
// the acknowledged commands made, or that plus the one in flight.
func TestCrashFunctions(t *testing.T) {
	seed := crashSeed(t)
	for _, mode := range []string{"pmem", "msync"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			s := startServer(t, dir, "--durability", mode)
			c := s.client()
			target := 40 + int(seed%60)
			acked := 0
			reached := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := 0; ; i++ {
					if err := c.Do(ctx, fnOp(i)...).Err(); err != nil {
						return // the server was killed
					}
					acked = i + 1
					if acked == target {
						close(reached)
					}
				}
			}()
			<-reached
			s.kill()
			<-done
			want := fnState{libs: map[string]bool{}}
			for i := 0; i < acked; i++ {
				want = applyFnOp(want, i)
			}
			inFlight := applyFnOp(want, acked)

			s = startServer(t, dir, "--durability", mode)
			c = s.client()
			libs, err := c.FunctionList(ctx, redis.FunctionListQuery{}).Result()
			if err != nil {
				t.Fatal(err)
			}
			got := fnState{libs: map[string]bool{}}
			for _, l := range libs {
				got.libs[l.Name] = true
			}
			got.counter, _ = c.Get(ctx, "counter").Int64()
			same := func(a, b fnState) bool {
				if a.counter != b.counter || len(a.libs) != len(b.libs) {
					return false
				}
				for k := range a.libs {
					if !b.libs[k] {
						return false
					}
				}
				return true
			}
			if !same(got, want) && !same(got, inFlight) {
				t.Fatalf("after %d acknowledged commands and a kill: %v counter %d, want %v counter %d (or with the command in flight %v counter %d)",
					acked, got.libs, got.counter, want.libs, want.counter, inFlight.libs, inFlight.counter)
			}
			// The recovered functions run.
			if n, err := c.FCall(ctx, "inc0", []string{"counter"}).Int64(); err != nil || n != got.counter+1 {
				t.Fatalf("FCALL inc0 after recovery: %d %v", n, err)
			}
			t.Logf("%d acknowledged commands, %d libraries recovered", acked, len(libs))
		})
	}
}
