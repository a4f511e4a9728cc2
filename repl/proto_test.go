package repl

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// FuzzCommandReader: any input ends in an error or commands whose sizes
// are the bytes they took, whose kept raw bytes are exactly those bytes,
// and which re-encode to them (only canonical RESP is accepted); nothing
// panics or allocates from a claimed length alone.
func FuzzCommandReader(f *testing.F) {
	f.Add(command("SET", "k", "v"))
	f.Add(append(command("SELECT", "1"), command("PING")...))
	f.Add([]byte("\n*1\r\n$4\r\nPING\r\n"))
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$99999999999\r\n"))
	f.Add([]byte("*-1\r\n"))
	f.Add([]byte("*1\r\n$1\r\nab\r\n"))
	f.Fuzz(func(t *testing.T, p []byte) {
		cr := commandReader{br: bufio.NewReaderSize(bytes.NewReader(p), 16), keep: true}
		var total int64
		for {
			argv, size, err := cr.next()
			if err != nil {
				break
			}
			if int64(len(cr.raw)) != size || !bytes.Equal(cr.raw, p[total:total+size]) {
				t.Fatalf("command of %d bytes kept %q, input %q", size, cr.raw, p[total:])
			}
			if p[total] == '*' && !bytes.Equal(appendCommand(nil, argv...), cr.raw) {
				t.Fatalf("re-encoding %q gives %q", cr.raw, appendCommand(nil, argv...))
			}
			total += size
		}
		if total > int64(len(p)) {
			t.Fatalf("consumed %d of %d bytes", total, len(p))
		}
	})
}

// TestMarkReader: a payload followed by the mark and more bytes, read in
// random chunks, yields the payload, then io.EOF, and keeps the bytes
// after the mark; without the mark the source's end is ErrUnexpectedEOF.
func TestMarkReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	mark := []byte(NewReplID())
	for i := range 300 {
		payload := make([]byte, rng.IntN(3000))
		for j := range payload {
			payload[j] = byte(rng.IntN(256))
		}
		after := []byte("*1\r\n$4\r\nPING\r\n")[:rng.IntN(15)]
		in := append(append(append([]byte(nil), payload...), mark...), after...)
		var src io.Reader = bytes.NewReader(in)
		if i%2 == 0 {
			src = iotest.HalfReader(src)
		}
		mr := &markReader{br: bufio.NewReaderSize(src, 16+rng.IntN(100)), mark: mark}
		var got []byte
		buf := make([]byte, 1+rng.IntN(200))
		for {
			n, err := mr.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		rest, _ := io.ReadAll(io.MultiReader(bytes.NewReader(mr.rest), mr.br))
		if !bytes.Equal(got, payload) || !bytes.Equal(rest, after) || mr.n != int64(len(payload)) {
			t.Fatalf("case %d: payload %d bytes read as %d, after %q read as %q", i, len(payload), len(got), after, rest)
		}
	}
	mr := &markReader{br: bufio.NewReader(bytes.NewReader([]byte("no mark here, and more than forty bytes of it"))), mark: mark}
	if _, err := io.ReadAll(mr); err != io.ErrUnexpectedEOF {
		t.Fatalf("a transfer without its mark: %v", err)
	}
}

// TestCommandReaderBigArgument: an argument of 200 KB arriving in small
// reads, and a claimed length far beyond the bytes that follow.
func TestCommandReaderBigArgument(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 20000)
	in := appendCommand(nil, []byte("SET"), []byte("k"), big)
	cr := commandReader{br: bufio.NewReader(iotest.HalfReader(bytes.NewReader(in)))}
	argv, size, err := cr.next()
	if err != nil || size != int64(len(in)) || len(argv) != 3 || !bytes.Equal(argv[2], big) {
		t.Fatalf("big argument: %v, size %d of %d", err, size, len(in))
	}
	cr = commandReader{br: bufio.NewReader(bytes.NewReader([]byte("*1\r\n$500000000\r\nshort")))}
	if _, _, err := cr.next(); err != io.ErrUnexpectedEOF {
		t.Fatalf("claimed 500 MB, sent 5 bytes: %v", err)
	}
}
