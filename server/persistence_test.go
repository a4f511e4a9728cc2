package server

import (
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
)

// BGREWRITEAOF answers as redis-server 7.0.15 does when it starts a
// rewrite (an operator's script or a tool that runs it no longer gets
// ERR unknown command), counts in INFO aof_rewrites, and has Redis's
// arity, flags and ACL categories in COMMAND INFO.
func TestBgRewriteAOF(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	w := dialAddr(t, s.addr)
	wantInfo(t, infoLine(w, "persistence", "aof_rewrites"), "0", "aof_rewrites at start")
	if got := w.do("SET", "k", "v"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if got := w.do("BGREWRITEAOF"); got != "+Background append only file rewriting started\r\n" {
		t.Fatalf("BGREWRITEAOF = %q", got)
	}
	if got := w.do("BGREWRITEAOF", "x"); got != "-ERR wrong number of arguments for 'bgrewriteaof' command\r\n" {
		t.Fatalf("BGREWRITEAOF x = %q", got)
	}
	wantInfo(t, infoLine(w, "persistence", "aof_rewrites"), "1", "aof_rewrites after BGREWRITEAOF")
	want := "*1\r\n*10\r\n$12\r\nbgrewriteaof\r\n:1\r\n*3\r\n+admin\r\n+noscript\r\n+no_async_loading\r\n" +
		":0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n"
	if got := w.do("COMMAND", "INFO", "bgrewriteaof"); got != want {
		t.Fatalf("COMMAND INFO bgrewriteaof:\n got %q\nwant %q", got, want)
	}
}
