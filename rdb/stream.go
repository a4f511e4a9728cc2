package rdb

import (
	"encoding/binary"
	"errors"
	"io"
	"strconv"
)

// Reader decodes an RDB file record by record from a stream (a
// replication transfer, a file too big to hold), holding one record in
// memory at a time rather than the whole file.
//
// It reads from its source in chunks of readChunk bytes or more and
// waits for a chunk to fill (or the source to end), so the source should
// end where the RDB ends (a LimitReader, a marker-framed reader); Buffered
// returns what it read past the RDB. The slices of an Entry or a function returned by Next
// stay valid after later calls (a refill moves unread bytes to a new
// buffer and never overwrites the old one).
type Reader struct {
	src     io.Reader
	buf     []byte // buf[pos:] is read but not yet decoded
	pos     int
	srcDone bool  // src returned an error (io.EOF or another)
	srcErr  error // that error, when it is not io.EOF
	crc     uint64
	version int
	done    bool

	db                 int
	expire, idle, freq int64
}

const readChunk = 64 << 10

// Item is one record Next returns: an Aux field, a function library or a
// key (Entry).
type Item struct {
	Aux      *[2]string // an AUX field (name, value)
	Function []byte     // a FUNCTION2 record: a library's source
	Entry    *Entry     // a key
}

// NewReader reads the header of an RDB file of version 1 to Version from
// src. Errors wrap ErrBadFormat or are src's.
func NewReader(src io.Reader) (*Reader, error) {
	r := &Reader{src: src, idle: -1, freq: -1}
	r.fill(9)
	p := r.buf[r.pos:]
	if len(p) < 9 || string(p[:5]) != magic {
		if r.srcErr != nil {
			return nil, r.srcErr
		}
		return nil, errf("not an RDB file")
	}
	ver, err := strconv.Atoi(string(p[5:9]))
	if err != nil || ver < 1 || ver > Version {
		return nil, errf("RDB version %q", p[5:9])
	}
	r.version = ver
	r.consume(9)
	return r, nil
}

// Version is the file's version from its header.
func (r *Reader) Version() int { return r.version }

// Buffered is what the Reader read from its source past the end of the
// RDB (after the checksum); meaningful once Next returned io.EOF.
func (r *Reader) Buffered() []byte { return r.buf[r.pos:] }

// fill reads until at least want more bytes are buffered or src ends,
// into a fresh buffer holding the unread bytes first.
func (r *Reader) fill(want int) {
	left := len(r.buf) - r.pos
	nb := make([]byte, left, left+max(want, readChunk))
	copy(nb, r.buf[r.pos:])
	r.buf, r.pos = nb, 0
	for len(r.buf) < left+want && !r.srcDone {
		m, err := r.src.Read(r.buf[len(r.buf):cap(r.buf)])
		r.buf = r.buf[:len(r.buf)+m]
		if err != nil {
			r.srcDone = true
			if err != io.EOF {
				r.srcErr = err
			}
		}
	}
}

func (r *Reader) consume(n int) {
	r.crc = CRC64(r.crc, r.buf[r.pos:r.pos+n])
	r.pos += n
}

// Next returns the next AUX field, function or key, skipping keys whose
// collection is empty (as Redis's loader does), and io.EOF after the EOF
// record and a matching checksum. Other errors wrap ErrBadFormat,
// ErrUnsupported (modules, module aux data) or ErrChecksum, or are
// the source's (io.ErrUnexpectedEOF when it ends inside the RDB).
func (r *Reader) Next() (Item, error) {
	for {
		if r.done {
			return Item{}, io.EOF
		}
		it, n, err := r.record()
		if err != nil {
			if errors.Is(err, ErrUnsupported) || errors.Is(err, ErrChecksum) {
				return Item{}, err
			}
			// A record cut by the end of the buffer: read more and
			// decode it again from its start. The buffer at least
			// doubles, so a record costs at most about twice its size.
			if !r.srcDone {
				r.fill(len(r.buf) - r.pos + 1)
				continue
			}
			if r.srcErr != nil {
				return Item{}, r.srcErr
			}
			if r.pos == len(r.buf) {
				return Item{}, io.ErrUnexpectedEOF
			}
			return Item{}, err
		}
		r.consume(n)
		if it != nil {
			return *it, nil
		}
	}
}

// record decodes one record at r.buf[r.pos:] and returns the Item it
// yields (nil for opcodes that only set state: SELECTDB, RESIZEDB, expiry,
// IDLE, FREQ, an empty collection) and the bytes it took. The Reader's
// state changes only on success.
func (r *Reader) record() (*Item, int, error) {
	d := &decoder{p: r.buf[r.pos:]}
	t, err := d.byte()
	if err != nil {
		return nil, 0, err
	}
	switch t {
	case opEOF:
		if r.version >= 5 {
			sum, err := d.bytes(8)
			if err != nil {
				return nil, 0, err
			}
			crc := CRC64(r.crc, d.p[:1])
			if want := binary.LittleEndian.Uint64(sum); want != 0 && want != crc {
				return nil, 0, ErrChecksum
			}
		}
		r.done = true
		return nil, d.i, nil
	case opSelectDB:
		n, enc, err := d.length()
		if err != nil {
			return nil, 0, err
		}
		if enc || n > 1<<20 {
			return nil, 0, errf("SELECTDB")
		}
		r.db = int(n)
		return nil, d.i, nil
	case opResizeDB:
		for range 2 {
			if _, _, err := d.length(); err != nil {
				return nil, 0, err
			}
		}
		return nil, d.i, nil
	case opAux:
		k, err := d.string()
		if err != nil {
			return nil, 0, err
		}
		v, err := d.string()
		if err != nil {
			return nil, 0, err
		}
		return &Item{Aux: &[2]string{string(k), string(v)}}, d.i, nil
	case opExpireTimeM:
		b, err := d.bytes(8)
		if err != nil {
			return nil, 0, err
		}
		r.expire = int64(binary.LittleEndian.Uint64(b))
		return nil, d.i, nil
	case opExpireTime:
		b, err := d.bytes(4)
		if err != nil {
			return nil, 0, err
		}
		r.expire = int64(int32(binary.LittleEndian.Uint32(b))) * 1000
		return nil, d.i, nil
	case opIdle:
		n, enc, err := d.length()
		if err != nil {
			return nil, 0, err
		}
		if enc {
			return nil, 0, errf("IDLE")
		}
		r.idle = int64(n)
		return nil, d.i, nil
	case opFreq:
		b, err := d.byte()
		if err != nil {
			return nil, 0, err
		}
		r.freq = int64(b)
		return nil, d.i, nil
	case opFunction2:
		code, err := d.string()
		if err != nil {
			return nil, 0, err
		}
		return &Item{Function: code}, d.i, nil
	case opFunction, opModuleAux:
		return nil, 0, ErrUnsupported
	}
	key, err := d.string()
	if err != nil {
		return nil, 0, err
	}
	v, err := d.object(t)
	expire, idle, freq := r.expire, r.idle, r.freq
	if err != nil && !errors.Is(err, errEmpty) {
		return nil, 0, err
	}
	r.expire, r.idle, r.freq = 0, -1, -1
	if err != nil {
		return nil, d.i, nil
	}
	return &Item{Entry: &Entry{DB: r.db, Key: key, Value: v, ExpireAtMs: expire, Idle: idle, Freq: int(freq)}}, d.i, nil
}

// Writer writes an RDB file of version Version to a stream, key by key.
// Keys of one database must come together (a change of database writes a
// SELECTDB); no RESIZEDB hint is written, which Redis's loader accepts.
type Writer struct {
	w   io.Writer
	buf []byte
	crc uint64
	db  int
	err error
}

const writeChunk = 64 << 10

// NewWriter starts an RDB file on w: the header and the AUX fields.
func NewWriter(w io.Writer, aux [][2]string) *Writer {
	wr := &Writer{w: w, db: -1, buf: []byte(magic + "0010")}
	for _, a := range aux {
		wr.buf = appendString(appendString(append(wr.buf, opAux), []byte(a[0])), []byte(a[1]))
	}
	return wr
}

func (w *Writer) flush() error {
	if w.err == nil && len(w.buf) > 0 {
		w.crc = CRC64(w.crc, w.buf)
		_, w.err = w.w.Write(w.buf)
		w.buf = w.buf[:0]
	}
	return w.err
}

// WriteFunction writes a FUNCTION2 record (a library's source). Functions
// go before the keys.
func (w *Writer) WriteFunction(code []byte) error {
	w.buf = appendString(append(w.buf, opFunction2), code)
	if len(w.buf) >= writeChunk {
		return w.flush()
	}
	return w.err
}

// WriteEntry writes one key (SELECTDB first when e.DB is not the current
// database). Errors are w's or an unencodable Value's.
func (w *Writer) WriteEntry(e *Entry) error {
	if w.err != nil {
		return w.err
	}
	if e.DB != w.db {
		w.buf = appendLength(append(w.buf, opSelectDB), uint64(e.DB))
		w.db = e.DB
	}
	p, err := appendEntry(w.buf, e)
	if err != nil {
		return err
	}
	w.buf = p
	if len(w.buf) >= writeChunk {
		return w.flush()
	}
	return nil
}

// Close writes the EOF record and the checksum and flushes; it does not
// close the underlying writer.
func (w *Writer) Close() error {
	w.buf = append(w.buf, opEOF)
	w.crc = CRC64(w.crc, w.buf)
	w.buf = binary.LittleEndian.AppendUint64(w.buf, w.crc)
	if w.err == nil {
		_, w.err = w.w.Write(w.buf)
	}
	w.buf = w.buf[:0]
	return w.err
}

// appendEntry appends e's expiry, IDLE/FREQ, type byte, key and body.
func appendEntry(p []byte, e *Entry) ([]byte, error) {
	obj, err := AppendObject(nil, &e.Value)
	if err != nil {
		return p, err
	}
	if e.ExpireAtMs != 0 {
		p = binary.LittleEndian.AppendUint64(append(p, opExpireTimeM), uint64(e.ExpireAtMs))
	}
	if e.Idle >= 0 && e.Freq < 0 {
		p = appendLength(append(p, opIdle), uint64(e.Idle))
	}
	if e.Freq >= 0 {
		p = append(p, opFreq, byte(e.Freq))
	}
	p = append(p, obj[0])
	p = appendString(p, e.Key) // Redis integer-encodes keys too
	return append(p, obj[1:]...), nil
}
