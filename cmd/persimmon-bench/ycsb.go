package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// ycsbConfig mirrors YCSB's CoreWorkload properties.
type ycsbConfig struct {
	addr, auth       string
	workload         string // load, a, b, c, f
	group            string // string, hash, list, set, zset
	keyPrefix        string
	recordCount      int64
	operationCount   int64
	fieldCount       int
	fieldLength      int
	threads          int
	distribution     string // uniform, zipfian, latest
	readAllFields    bool
	maxExecutionTime time.Duration
	progress         io.Writer
}

// ycsbMix is the operation mix of a core workload.
type ycsbMix struct{ read, update, rmw float64 }

var ycsbWorkloads = map[string]ycsbMix{
	"a": {read: 0.5, update: 0.5},
	"b": {read: 0.95, update: 0.05},
	"c": {read: 1},
	"f": {read: 0.5, rmw: 0.5},
}

// ycsbKey is YCSB's CoreWorkload.buildKeyName with orderedinserts=false.
func ycsbKey(b []byte, prefix string, keynum uint64) []byte {
	b = append(b, prefix...)
	return strconv.AppendUint(b, fnvHash64(keynum), 10)
}

// defaultKeyPrefix keeps the groups' records apart on one server: YCSB's
// "user" for strings, a letter in front for the other groups.
func defaultKeyPrefix(group string) string {
	if group == "string" {
		return "user"
	}
	return group[:1] + "user"
}

// ycsbClient turns YCSB operations into the commands of one command group and
// runs them synchronously on one connection (YCSB's clients are synchronous).
type ycsbClient struct {
	cfg         *ycsbConfig
	c           *conn
	r           *rand.Rand
	rec         *recorder
	key         []byte
	args        [][]byte
	fld         [][]byte // "field0" … "fieldN-1"
	num         []byte
	unsupported *atomic.Bool
}

func newYCSBClient(cfg *ycsbConfig, c *conn, r *rand.Rand, rec *recorder, unsup *atomic.Bool) *ycsbClient {
	y := &ycsbClient{cfg: cfg, c: c, r: r, rec: rec, unsupported: unsup}
	for i := 0; i < cfg.fieldCount; i++ {
		y.fld = append(y.fld, []byte("field"+strconv.Itoa(i)))
	}
	return y
}

// member is the deterministic element stored for field i of record keynum in
// the set and zset groups: "fieldI:" followed by fieldlength bytes.
func (y *ycsbClient) member(keynum uint64, i int) []byte {
	v := fixedValue(keynum*uint64(y.cfg.fieldCount)+uint64(i), y.cfg.fieldLength)
	m := make([]byte, 0, len(y.fld[i])+1+len(v))
	m = append(append(append(m, y.fld[i]...), ':'), v...)
	return m
}

func (y *ycsbClient) value() []byte { return randomValue(y.r, y.cfg.fieldLength) }

func (y *ycsbClient) score() []byte {
	y.num = strconv.AppendUint(y.num[:0], y.r.Uint64N(1_000_000), 10)
	return append([]byte(nil), y.num...)
}

func (y *ycsbClient) cmd(args ...[]byte) { y.args = append(y.args[:0], args...) }

func (y *ycsbClient) insertCmd(keynum uint64) {
	key := ycsbKey(y.key[:0], y.cfg.keyPrefix, keynum)
	y.key = key
	switch y.cfg.group {
	case "string":
		y.cmd([]byte("SET"), key, y.value())
	case "hash":
		y.cmd([]byte("HSET"), key)
		for i := range y.fld {
			y.args = append(y.args, y.fld[i], y.value())
		}
	case "list":
		y.cmd([]byte("RPUSH"), key)
		for range y.fld {
			y.args = append(y.args, y.value())
		}
	case "set":
		y.cmd([]byte("SADD"), key)
		for i := range y.fld {
			y.args = append(y.args, y.member(keynum, i))
		}
	case "zset":
		y.cmd([]byte("ZADD"), key)
		for i := range y.fld {
			y.args = append(y.args, y.score(), y.member(keynum, i))
		}
	}
}

func (y *ycsbClient) readCmd(keynum uint64) {
	key := ycsbKey(y.key[:0], y.cfg.keyPrefix, keynum)
	y.key = key
	i := y.r.IntN(len(y.fld))
	all := y.cfg.readAllFields
	switch y.cfg.group {
	case "string":
		y.cmd([]byte("GET"), key)
	case "hash":
		if all {
			y.cmd([]byte("HGETALL"), key)
		} else {
			y.cmd([]byte("HMGET"), key, y.fld[i])
		}
	case "list":
		if all {
			y.cmd([]byte("LRANGE"), key, []byte("0"), []byte("-1"))
		} else {
			y.cmd([]byte("LINDEX"), key, []byte(strconv.Itoa(i)))
		}
	case "set":
		if all {
			y.cmd([]byte("SMEMBERS"), key)
		} else {
			y.cmd([]byte("SISMEMBER"), key, y.member(keynum, i))
		}
	case "zset":
		if all {
			y.cmd([]byte("ZRANGE"), key, []byte("0"), []byte("-1"), []byte("WITHSCORES"))
		} else {
			y.cmd([]byte("ZSCORE"), key, y.member(keynum, i))
		}
	}
}

// updateCmd writes one field (YCSB's writeallfields=false). For sets, which
// have no fields, an update adds one fresh member.
func (y *ycsbClient) updateCmd(keynum uint64) {
	key := ycsbKey(y.key[:0], y.cfg.keyPrefix, keynum)
	y.key = key
	i := y.r.IntN(len(y.fld))
	switch y.cfg.group {
	case "string":
		y.cmd([]byte("SET"), key, y.value())
	case "hash":
		y.cmd([]byte("HSET"), key, y.fld[i], y.value())
	case "list":
		y.cmd([]byte("LSET"), key, []byte(strconv.Itoa(i)), y.value())
	case "set":
		m := append(append([]byte(nil), y.fld[i]...), ':')
		y.cmd([]byte("SADD"), key, append(m, y.value()...))
	case "zset":
		y.cmd([]byte("ZADD"), key, y.score(), y.member(keynum, i))
	}
}

// exec sends y.args and reports the latency and whether it failed.
func (y *ycsbClient) exec() (time.Duration, int64, string, error) {
	t0 := time.Now()
	rep, err := y.c.do(y.args...)
	d := time.Since(t0)
	if err != nil {
		return d, 0, "", err
	}
	if rep.isErr() {
		if isUnsupported(rep.msg) {
			y.unsupported.Store(true)
		}
		return d, 1, rep.msg, nil
	}
	return d, 0, "", nil
}

func (y *ycsbClient) op(name string, build func(uint64), keynum uint64) (time.Duration, int64, error) {
	build(keynum)
	d, e, msg, err := y.exec()
	if err != nil {
		return d, e, err
	}
	y.rec.record(name, d, 1, e, msg)
	return d, e, nil
}

// runYCSBPhase runs the load phase (workload "load") or a transaction phase.
func runYCSBPhase(cfg ycsbConfig) (*result, error) {
	if cfg.group == "string" {
		cfg.fieldCount = 1
	}
	if cfg.keyPrefix == "" && cfg.group != "" {
		cfg.keyPrefix = defaultKeyPrefix(cfg.group)
	}
	if cfg.fieldCount < 1 || cfg.fieldLength < 1 || cfg.recordCount < 1 || cfg.threads < 1 {
		return nil, fmt.Errorf("fieldcount, fieldlength, recordcount and threads must be positive")
	}
	switch cfg.group {
	case "string", "hash", "list", "set", "zset":
	default:
		return nil, fmt.Errorf("unknown command group %q", cfg.group)
	}
	load := cfg.workload == "load"
	mix, ok := ycsbWorkloads[cfg.workload]
	if !load && !ok {
		return nil, fmt.Errorf("unknown workload %q (load, a, b, c, f)", cfg.workload)
	}
	var chooser keyGen
	n := uint64(cfg.recordCount)
	switch cfg.distribution {
	case "uniform":
		chooser = uniformGen{n}
	case "zipfian":
		chooser = newScrambledZipfian(0, n-1)
	case "latest":
		chooser = newLatest(n)
	default:
		return nil, fmt.Errorf("unknown requestdistribution %q", cfg.distribution)
	}
	total := cfg.operationCount
	if load {
		total = cfg.recordCount
	}
	var (
		claimed     atomic.Int64
		done        atomic.Int64
		unsupported atomic.Bool
	)
	res, err := runConns(cfg.addr, cfg.auth, cfg.threads, "ycsb "+cfg.workload, cfg.progress, cfg.maxExecutionTime,
		func(t int, c *conn, rec *recorder, deadline time.Time, stop *atomic.Bool) error {
			y := newYCSBClient(&cfg, c, rand.New(rand.NewPCG(uint64(t+1), uint64(time.Now().UnixNano()))), rec, &unsupported)
			return y.loop(load, mix, chooser, total, &claimed, &done, stop, deadline)
		})
	if err != nil {
		return nil, err
	}
	// A read-modify-write is one operation overall, though its READ and
	// UPDATE are also reported under their own names (as YCSB does).
	res.Ops = done.Load()
	if res.Seconds > 0 {
		res.QPS = float64(res.Ops) / res.Seconds
	}
	res.Tool, res.Phase, res.Workers, res.Server = "ycsb", cfg.workload, cfg.threads, cfg.addr
	res.Command = fmt.Sprintf("group=%s recordcount=%d operationcount=%d fieldcount=%d fieldlength=%d requestdistribution=%s",
		cfg.group, cfg.recordCount, cfg.operationCount, cfg.fieldCount, cfg.fieldLength, cfg.distribution)
	res.Unsupported = unsupported.Load()
	return res, nil
}

func (y *ycsbClient) loop(load bool, mix ycsbMix, chooser keyGen, total int64, claimed, done *atomic.Int64,
	stop *atomic.Bool, deadline time.Time) error {
	timed := y.cfg.maxExecutionTime > 0
	for !stop.Load() {
		if y.unsupported.Load() {
			stop.Store(true)
			return nil
		}
		seq := claimed.Add(1) - 1
		if seq >= total {
			return nil
		}
		if timed && time.Now().After(deadline) {
			return nil
		}
		if load {
			if _, _, err := y.op("INSERT", y.insertCmd, uint64(seq)); err != nil {
				return err
			}
			done.Add(1)
			continue
		}
		keynum := chooser.next(y.r)
		p := y.r.Float64()
		switch {
		case p < mix.read:
			if _, _, err := y.op("READ", y.readCmd, keynum); err != nil {
				return err
			}
		case p < mix.read+mix.update:
			if _, _, err := y.op("UPDATE", y.updateCmd, keynum); err != nil {
				return err
			}
		default: // read-modify-write
			d1, e1, err := y.op("READ", y.readCmd, keynum)
			if err != nil {
				return err
			}
			d2, e2, err := y.op("UPDATE", y.updateCmd, keynum)
			if err != nil {
				return err
			}
			// The combined op is not counted in the live line twice.
			o := y.rec.op("READ-MODIFY-WRITE")
			o.hist.RecordValue(int64(d1 + d2))
			if e1+e2 > 0 {
				if o.errs == 0 {
					o.firstErr = "read or update failed"
				}
				o.errs++
			}
		}
		done.Add(1)
	}
	return nil
}

func runYCSB(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("ycsb", stderr)
	host := fs.String("h", "127.0.0.1", "host")
	port := fs.Int("p", 6379, "port")
	auth := fs.String("a", "", "password (user:password sent as one AUTH argument)")
	cfg := ycsbConfig{}
	fs.StringVar(&cfg.workload, "workload", "a", "load, a, b, c or f")
	fs.StringVar(&cfg.group, "group", "string", "string, hash, list, set or zset")
	fs.StringVar(&cfg.keyPrefix, "keyprefix", "", "key prefix (default user for string, huser, luser, suser, zuser for the others)")
	fs.Int64Var(&cfg.recordCount, "recordcount", 10000, "records")
	fs.Int64Var(&cfg.operationCount, "operationcount", 100000, "operations in a transaction phase")
	fs.IntVar(&cfg.fieldCount, "fieldcount", 10, "fields per record (string: always 1)")
	fs.IntVar(&cfg.fieldLength, "fieldlength", 100, "bytes per field")
	fs.IntVar(&cfg.threads, "threads", 8, "client threads (connections)")
	fs.StringVar(&cfg.distribution, "requestdistribution", "zipfian", "uniform, zipfian or latest")
	fs.BoolVar(&cfg.readAllFields, "readallfields", true, "read whole records (HGETALL, LRANGE, SMEMBERS, ZRANGE) instead of one field")
	maxSecs := fs.Float64("maxexecutiontime", 0, "stop a phase after this many seconds (0: no limit)")
	var cm common
	cm.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ycsb: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	cfg.workload = strings.ToLower(cfg.workload)
	cfg.addr = net.JoinHostPort(*host, strconv.Itoa(*port))
	cfg.auth = *auth
	cfg.maxExecutionTime = time.Duration(*maxSecs * float64(time.Second))
	if !cm.quiet {
		cfg.progress = stderr
	}
	res, err := withDurability(cm.durability, cfg.addr, cfg.auth, stderr, func() (*result, error) {
		return runYCSBPhase(cfg)
	}, func(r *result) int64 {
		var w int64
		for _, o := range r.PerOp {
			if o.Name == "INSERT" || o.Name == "UPDATE" {
				w += o.Ops - o.Errors
			}
		}
		return w
	})
	if err != nil {
		fmt.Fprintf(stderr, "ycsb: %v\n", err)
		return 1
	}
	if cm.json {
		printJSON(stdout, res)
		return 0
	}
	fmt.Fprintf(stdout, "# ycsb workload %s: %s threads=%d server=%s\n", cfg.workload, res.Command, cfg.threads, cfg.addr)
	if res.Unsupported {
		fmt.Fprintf(stdout, "not supported: %s\n", res.FirstError)
	}
	printYCSB(stdout, res)
	return 0
}
