package server

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// A command name with spaces and a ')' must not shift the fields.
	line := "4242 (a b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 567 0 0 20 0 7 0 99 0 0\n"
	sys, user, err := parseStatCPU([]byte(line))
	if err != nil || sys != 5.67 || user != 12.34 {
		t.Fatalf("parseStatCPU = %v %v %v, want sys 5.67 user 12.34", sys, user, err)
	}
	if _, _, err := parseStatCPU([]byte("12 (x) S 1 2")); err == nil {
		t.Fatal("a short stat line parsed")
	}
}

// infoCPU reads INFO cpu's four process and main-thread figures.
func infoCPU(t *testing.T, w *wire) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, l := range strings.Split(w.do("INFO", "cpu"), "\r\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || !strings.HasPrefix(k, "used_cpu_") {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("INFO %s = %q", k, v)
		}
		out[k] = f
	}
	return out
}

// burnCPU spins on the calling goroutine for d of its own CPU time (not
// wall time: the machine may be loaded).
func burnCPU(t *testing.T, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var x uint64
	for begin := processCPU(t); processCPU(t)-begin < d.Seconds(); {
		for i := 0; i < 1_000_000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		if time.Now().After(deadline) {
			t.Fatal("could not burn the CPU time in 30 s")
		}
	}
	if x == 42 {
		t.Log(x)
	}
}

func processCPU(t testing.TB) float64 {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return tvSeconds(ru.Stime) + tvSeconds(ru.Utime)
}

// In loop mode the main-thread figures are the event loop thread's: CPU
// burnt by another goroutine raises the process's figures, not them.
func TestInfoMainThreadCPU(t *testing.T) {
	s := startWire(t, Config{IO: IOLoop}, &fakeKS{})
	w := dialWire(t, s)
	before := infoCPU(t, w)
	burnCPU(t, 600*time.Millisecond)
	after := infoCPU(t, w)
	proc := after["used_cpu_sys"] + after["used_cpu_user"] - before["used_cpu_sys"] - before["used_cpu_user"]
	main := after["used_cpu_sys_main_thread"] + after["used_cpu_user_main_thread"] -
		before["used_cpu_sys_main_thread"] - before["used_cpu_user_main_thread"]
	if proc < 0.5 {
		t.Fatalf("the process's CPU rose by %.3f s while 0.6 s were burnt", proc)
	}
	if main < 0 || main > 0.2 {
		t.Fatalf("the main thread's CPU rose by %.3f s while another goroutine burnt 0.6 s (process: %.3f s)", main, proc)
	}
	if after["used_cpu_user_main_thread"] > after["used_cpu_user"] || after["used_cpu_sys_main_thread"] > after["used_cpu_sys"]+0.01 {
		t.Fatalf("main thread above the process: %v", after)
	}
	// The loop's own reading (RUSAGE_THREAD) and /proc's agree to the tick.
	sys, user, err := threadStatCPU(s.loop.ThreadID())
	if err != nil {
		t.Fatal(err)
	}
	if d := sys + user - after["used_cpu_sys_main_thread"] - after["used_cpu_user_main_thread"]; d < -0.03 || d > 0.1 {
		t.Fatalf("/proc says %.3f s for the loop thread, INFO %.3f s", sys+user,
			after["used_cpu_sys_main_thread"]+after["used_cpu_user_main_thread"])
	}
}
