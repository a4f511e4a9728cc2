package server

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// INFO cpu's used_cpu_sys_main_thread / used_cpu_user_main_thread (Redis:
// getrusage(RUSAGE_THREAD) on its main thread). In loop mode the event
// loop, which runs every command, is locked to one OS thread (evloop.Run):
// its CPU time is that thread's. INFO runs on the loop itself, so it asks
// the kernel for the calling thread (microseconds); from any other thread
// it reads /proc/self/task/<tid>/stat (clock ticks). In goroutine mode no
// thread runs every command, so the fields are the process's totals.

// clockTicks is USER_HZ, the unit of /proc's utime and stime: 100 on every
// Linux architecture Go supports (the kernel's ABI fixes it).
const clockTicks = 100

// mainThreadCPU returns the event loop thread's system and user CPU
// seconds; ok is false when there is no loop thread to measure.
func (s *Server) mainThreadCPU() (sys, user float64, ok bool) {
	if s.loop == nil {
		return 0, 0, false
	}
	tid := s.loop.ThreadID()
	if tid == 0 {
		return 0, 0, false
	}
	if unix.Gettid() == tid {
		var ru syscall.Rusage
		if syscall.Getrusage(unix.RUSAGE_THREAD, &ru) == nil {
			return tvSeconds(ru.Stime), tvSeconds(ru.Utime), true
		}
	}
	sys, user, err := threadStatCPU(tid)
	return sys, user, err == nil
}

func tvSeconds(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }

// threadStatCPU reads a thread of this process's stime and utime from
// /proc/self/task/<tid>/stat, in seconds.
func threadStatCPU(tid int) (sys, user float64, err error) {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	return parseStatCPU(b)
}

// parseStatCPU takes utime and stime (fields 14 and 15) from a stat line.
// The command name (field 2) is in parentheses and may hold spaces or
// parentheses itself: the fields are counted after its last ')'.
func parseStatCPU(b []byte) (sys, user float64, err error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("server: malformed stat line")
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("server: short stat line")
	}
	ut, err1 := strconv.ParseUint(string(f[11]), 10, 64)
	st, err2 := strconv.ParseUint(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("server: malformed stat times")
	}
	return float64(st) / clockTicks, float64(ut) / clockTicks, nil
}
