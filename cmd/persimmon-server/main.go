// Command persimmon-server serves the Redis protocol over a durable
// keyspace: every write is persistent before it is acknowledged.
//
//	persimmon-server [--config FILE] [--port 6379] [--bind 127.0.0.1]
//	                 [--dir ./data] [--durability pmem|msync|none]
//	                 [--segment-size 64mb] [--requirepass PASS]
//	                 [--protected-mode yes|no] [--maxclients N] [--timeout SECONDS]
//	                 [--proto-max-bulk-len 512mb] [--pidfile DIR/persimmon.pid|none]
//
// The config file takes redis.conf-style lines ("port 6380", "dir /x",
// "requirepass "a b"", "# comments") and any Redis 7.0 parameter, checked
// as redis-server checks it (a redis.conf redis-server accepts starts
// Persimmon); Redis parameters may also be given as flags the way
// redis-server takes them ("--save ” --appendonly no"). Flags given on
// the command line win over the file. SIGTERM and SIGINT shut down cleanly: the server stops
// accepting, finishes the batches in flight, makes everything durable,
// removes its pidfile and exits 0. --unixsocket PATH (and --unixsocketperm
// 700) listens on a unix socket too; --port 0 disables TCP, as in Redis,
// and without a unix socket the server refuses to start.
// PERSIMMON_PPROF=127.0.0.1:PORT in the environment serves Go's profiles
// (net/http/pprof) there, for benchmarks; nothing else opens it.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/persimmon-db/persimmon/commands"
	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/proto"
	"github.com/persimmon-db/persimmon/recovery"
	"github.com/persimmon-db/persimmon/server"
	"github.com/persimmon-db/persimmon/wal"
)

func main() {
	args := ownArgs() // proctitle.go: before the argv area is rewritten
	hideSecrets()
	if err := startPprof(os.Getenv("PERSIMMON_PPROF"), os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(run(args[1:], os.Stderr))
}

// directive is one setting, spelled the same as a flag and as a config
// file line.
type directive struct {
	name, def, usage string
}

var directives = []directive{
	{"port", "6379", "TCP port to listen on"},
	{"bind", "127.0.0.1", "addresses to listen on, space-separated (redis.conf syntax)"},
	{"dir", "./data", "data directory (the arena's segment files)"},
	{"durability", "pmem", "what happens before a reply: pmem (cache-line flush + fence), msync, or none"},
	{"segment-size", "64mb", "bytes per arena segment file (units: kb, mb, gb)"},
	{"requirepass", "", "password clients must AUTH with (empty: none)"},
	{"aclfile", "", "ACL users file (redis.conf's aclfile: read at start-up, ACL LOAD and ACL SAVE)"},
	{"protected-mode", "yes", "refuse non-loopback clients while no password is set (yes|no)"},
	{"maxclients", strconv.Itoa(server.DefaultMaxClients), "maximum number of connected clients"},
	{"timeout", "0", "close a client idle for this many seconds (0: never)"},
	{"proto-max-bulk-len", "512mb", "largest bulk string a request may carry"},
	{"threads", "auto", "Go scheduler threads (GOMAXPROCS): auto = all CPUs, except 1 for --io goroutine in pmem and none modes"},
	{"pidfile", "", "file the server writes its PID to, removed at a clean exit (empty: persimmon.pid in --dir; none: no file)"},
	{"io", "auto", "how connections are served: loop (one event loop), goroutine (one per connection), auto = loop"},
	{"key-index", "yes", "keep string keys in the persistent key index file instead of the heap, and restart from its checkpoint (yes|no)"},
}

// ioModel resolves the io setting. The event loop costs 10-20% less CPU
// per request than a goroutine per connection (measured on 2 cores shared
// with the client), and it never waits: in msync mode a batch that is not
// durable yet holds its replies while a committer goroutine runs the group
// commit (server/commit.go), so auto is the loop in every mode.
func ioModel(v string, mode pmem.Mode) (string, error) {
	switch v {
	case "", "auto", server.IOLoop:
		return server.IOLoop, nil
	case server.IOGoroutine:
		return v, nil
	}
	return "", fmt.Errorf("io must be auto, loop or goroutine, not %q", v)
}

// schedulerThreads resolves the threads setting for the durability mode
// and the I/O model (server.IOLoop or server.IOGoroutine). GOMAXPROCS in the
// environment wins over auto. Measured on 2 cores shared with the client
// (persimmon-bench resp -c 50):
//
//   - event loop: every CPU. The segment cleaner needs a thread of its
//     own: with one P it runs only when the loop goes idle, so under
//     sustained writes it falls behind without bound (redis-benchmark MSET
//     -r 100000, 1M requests: arena 927 MB for 9.2 MB live on one thread,
//     within the cleaner's bound on two). A second P also stops sysmon taking the P from the
//     loop thread each time it blocks in epoll_wait; reads gain about a
//     tenth (scripts/bench-collections.sh, same run: HGET 0.89x → 1.00x,
//     ZSCORE 0.88x → 1.02x of redis-server).
//   - goroutine per connection in pmem/none mode: one. Two threads serve
//     SET/GET at about 0.76x redis-server instead of 1.0x: the connection
//     goroutines contend for both cores with the client.
//   - msync mode: every CPU; one thread would stall every connection while a
//     group commit sits in msync. On the event loop one more: the loop
//     (in epoll_wait) and the committer (in msync) both sit in system
//     calls holding a P; with no P idle the runtime's sysmon takes one of
//     them away on every group commit and so never slows its 20 µs
//     polling. A spare P keeps one idle: scripts/bench-cpu.sh -c 50 SET,
//     4 interleaved rounds at load 18: 23.0-32.2 µs of server CPU per
//     request with NumCPU+1 Ps against 29.6-37.8 with NumCPU.
func schedulerThreads(v string, mode pmem.Mode, io string) (int, error) {
	if v == "" || v == "auto" {
		if env := os.Getenv("GOMAXPROCS"); env != "" {
			return runtime.GOMAXPROCS(0), nil
		}
		if mode == pmem.ModeMsync && io == server.IOLoop {
			return runtime.NumCPU() + 1, nil
		}
		if mode == pmem.ModeMsync || io == server.IOLoop {
			return runtime.NumCPU(), nil
		}
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("threads must be auto or a positive integer, not %q", v)
	}
	return n, nil
}

// syncProbes is how many msyncs the start-up line's cost probe times.
const syncProbes = 16

// syncCostText is the start-up line's tail giving what one msync costs on
// dir's filesystem, in msync mode (the price of every group commit) and in
// pmem mode without DAX (the price of the power safety it does not give);
// "" otherwise or if the probe fails.
func syncCostText(mode pmem.Mode, dir string, dax bool) string {
	if mode != pmem.ModeMsync && (mode != pmem.ModePmem || dax) {
		return ""
	}
	mean, worst, err := pmem.ProbeSync(dir, syncProbes)
	if err != nil {
		return ""
	}
	text := fmt.Sprintf("; one msync of a dirty 4 KiB page here: mean %d µs, worst %d µs of %d", mean.Microseconds(), worst.Microseconds(), syncProbes)
	if mode == pmem.ModeMsync {
		text += " (group commit shares each sync among every write made while the previous one ran; INFO persistence: wal_sync_mean_us, wal_records_per_sync)"
	}
	return text
}

// settings are the resolved directive values.
type settings map[string]string

func run(args []string, stderr io.Writer) int {
	logger := log.New(stderr, "", log.LstdFlags|log.Lmicroseconds)
	logf := logger.Printf

	set, configFile, fc, err := loadSettings(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		logf("fatal: %v", err)
		return 2
	}
	cfg, opts, err := buildConfig(set)
	if err != nil {
		logf("fatal: %v", err)
		return 2
	}
	cfg.ConfigFile = configFile
	cfg.Params = withDirectives(fc.params, set)
	cfg.RenameCommands = fc.renames
	cfg.ACLUsers = fc.users
	if lf := paramValue(fc.params, "logfile"); lf != "" {
		// As redis-server: the log goes to the file, and a file that
		// cannot be opened stops the start.
		f, err := os.OpenFile(lf, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			logf("fatal: can't open the log file %s: %v", lf, err)
			return 1
		}
		defer f.Close()
		logger.SetOutput(f)
	}
	for _, note := range fc.notes {
		logf("config: %s", note)
	}
	if w := server.AppendfsyncWarning("appendfsync", paramValue(fc.params, "appendfsync"), cfg.Durability); w != "" {
		logf("warning: %s", w)
	}
	opts.Logf = logf
	threads, err := schedulerThreads(set["threads"], opts.Mode, cfg.IO)
	if err != nil {
		logf("fatal: %v", err)
		return 2
	}
	runtime.GOMAXPROCS(threads)
	if cfg.Port == 0 {
		// Redis 7.0: port 0 disables the TCP listener; with no unix
		// socket either redis-server exits 1.
		if paramValue(fc.params, "unixsocket") == "" {
			logf("fatal: configured to not listen anywhere (--port 0 disables TCP and no unixsocket is set), exiting")
			return 1
		}
		cfg.NoTCP = true
	}

	// The port opens before recovery, as Redis's does before it loads:
	// until the keyspace is attached every command Redis refuses while
	// loading answers -LOADING, and INFO shows the progress.
	cfg.DumpValue = commands.DumpValue // replicas' snapshots
	progress := new(recovery.Progress)
	opts.Progress = progress
	srv := server.NewLoadingServer(cfg, logf, commands.Table(), func() (int64, int64) {
		return progress.Loaded.Load(), progress.Total.Load()
	})
	if err := srv.LoadACL(); err != nil {
		logf("fatal: %v", err)
		srv.Close()
		return 1
	}
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM)
	if err := srv.Listen(); err != nil {
		logf("fatal: %v", err)
		srv.Close()
		return 1
	}
	recovered := make(chan openedKeyspace, 1)
	go func() {
		ks, _, err := recovery.Open(opts)
		recovered <- openedKeyspace{ks, err}
	}()
	var ks *keyspace.Keyspace
	select {
	case r := <-recovered:
		if r.err != nil {
			logf("fatal: cannot open %s: %v", opts.Dir, r.err)
			if errors.Is(r.err, wal.ErrCorruption) {
				logf("inspect it with: persimmon-check verify %s; persimmon-check repair %s keeps the longest valid prefix (later segments go to lost+found)", opts.Dir, opts.Dir)
			}
			srv.Close()
			return 1
		}
		ks = r.ks
	case sig := <-sigc:
		return stopWhileLoading(logf, srv, recovered, fmt.Sprintf("received %v while loading", sig), 0)
	case <-srv.Done():
		return stopWhileLoading(logf, srv, recovered, "SHUTDOWN while loading", 0)
	}
	srv.Attach(ks)
	// The pidfile is written once the data directory is ours (recovery
	// holds its lock), so a second server refused on the same directory
	// never overwrites the first one's PID.
	pidfile := pidfilePath(set["pidfile"], opts.Dir)
	if pidfile != "" {
		if err := os.WriteFile(pidfile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			// As redis-server: a warning, and the server goes on.
			logf("warning: failed to write the PID file: %v", err)
		} else {
			logf("pid %d written to %s", os.Getpid(), pidfile)
			defer os.Remove(pidfile)
		}
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.AnnounceAndWait() }()
	// The probe's msyncs run once the port is open and the data served.
	dax := pmem.ProbeDAX(opts.Dir)
	logf("%s%s", pmem.Describe(opts.Mode, opts.Dir, dax), syncCostText(opts.Mode, opts.Dir, dax))
	logf("connections: --io %s; scheduler threads (GOMAXPROCS): %d", cfg.IO, threads)

	code := 0
	select {
	case sig := <-sigc:
		logf("received %v, shutting down", sig)
	case err := <-errc:
		// nil after SHUTDOWN; an error when listening failed.
		if err != nil {
			logf("fatal: %v", err)
			code = 1
		}
	}
	if err := srv.Close(); err != nil {
		logf("fatal: closing: %v", err)
		return 1
	}
	if st := ks.SyncStats(); st.Syncs > 0 {
		logf("group commits: %d syncs, mean %.1f µs, p99 %.1f µs (last 1024), %.2f records per sync",
			st.Syncs, float64(st.Mean)/1e3, float64(st.P99)/1e3, float64(st.Records)/float64(st.Syncs))
	}
	if code == 0 {
		logf("everything is durable; bye")
	}
	return code
}

// openedKeyspace is what recovery.Open gave.
type openedKeyspace struct {
	ks  *keyspace.Keyspace
	err error
}

// stopWhileLoading ends a server stopped before its keyspace was
// attached: the recovery runs to its end (it holds the data directory)
// and its keyspace is closed unchanged; why is logged.
func stopWhileLoading(logf func(string, ...any), srv *server.Server, recovered <-chan openedKeyspace, why string, code int) int {
	if why != "" {
		logf("%s: stopping once recovery has finished", why)
	}
	srv.Close()
	if r := <-recovered; r.ks != nil {
		if err := r.ks.Close(); err != nil {
			logf("fatal: closing: %v", err)
			return 1
		}
	}
	return code
}

// withDirectives returns params with the resolved value of every
// directive that is also a CONFIG parameter (pidfile, maxclients...), so a
// flag that won over the file is what CONFIG GET and CONFIG REWRITE see.
func withDirectives(params []server.ConfigLine, set settings) []server.ConfigLine {
	out := append([]server.ConfigLine(nil), params...)
	for _, d := range directives {
		v, ok := set[d.name]
		if !ok {
			continue
		}
		args := []string{v}
		if d.name == "bind" {
			args = strings.Fields(v)
		}
		l, _, known, err := server.CheckConfigLine(d.name, args)
		if !known || err != nil {
			continue
		}
		replaced := false
		for i := range out {
			if out[i].Name == l.Name {
				out[i], replaced = l, true
			}
		}
		if !replaced {
			out = append(out, l)
		}
	}
	return out
}

// paramValue is the value a config file gave the parameter name, or "".
func paramValue(params []server.ConfigLine, name string) string {
	for _, l := range params {
		if l.Name == name {
			return l.Value
		}
	}
	return ""
}

// pidfilePath resolves the pidfile setting: "" is persimmon.pid in the
// data directory, "none" is no pidfile.
func pidfilePath(v, dir string) string {
	switch v {
	case "":
		return filepath.Join(dir, "persimmon.pid")
	case "none":
		return ""
	}
	return v
}

// loadSettings reads the flags and the config file; a flag given on the
// command line wins over the file. A single positional argument is taken
// as the config file, as redis-server does.
func loadSettings(args []string, stderr io.Writer) (settings, string, fileConfig, error) {
	var fc fileConfig
	fs := flag.NewFlagSet("persimmon-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	vals := make(map[string]*string, len(directives))
	for _, d := range directives {
		vals[d.name] = fs.String(d.name, d.def, d.usage)
	}
	configFile := fs.String("config", "", "redis.conf-style file of the same settings")
	args, extra := splitRedisArgs(args, vals)
	if err := fs.Parse(args); err != nil {
		return nil, "", fc, err
	}
	switch {
	case fs.NArg() == 1 && *configFile == "":
		*configFile = fs.Arg(0)
	case fs.NArg() > 0:
		return nil, "", fc, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	given := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })

	if *configFile != "" {
		f, err := os.Open(*configFile)
		if err != nil {
			return nil, "", fc, err
		}
		var fromFile settings
		fromFile, fc, err = parseConfigFile(f, *configFile)
		f.Close()
		if err != nil {
			return nil, "", fc, err
		}
		for name, v := range fromFile {
			if !given[name] {
				*vals[name] = v
			}
		}
	}
	if extra != "" {
		// Redis parameters given as flags win over the file's.
		_, cmdline, err := parseConfigFile(strings.NewReader(extra), "command line")
		if err != nil {
			return nil, "", fc, err
		}
		for _, l := range cmdline.params {
			replaced := false
			for i := range fc.params {
				if fc.params[i].Name == l.Name {
					fc.params[i], replaced = l, true
				}
			}
			if !replaced {
				fc.params = append(fc.params, l)
			}
		}
		fc.notes = append(fc.notes, cmdline.notes...)
		fc.renames = append(fc.renames, cmdline.renames...)
		fc.renameAt = append(fc.renameAt, cmdline.renameAt...)
		fc.users = append(fc.users, cmdline.users...)
		fc.userAt = append(fc.userAt, cmdline.userAt...)
	}
	if at, err := server.CheckCommandRenames(commands.Table(), fc.renames); err != nil {
		return nil, "", fc, fmt.Errorf("%s: %v", fc.renameAt[at], err)
	}
	if at, err := server.CheckACLUsers(commands.Table(), fc.users); err != nil {
		return nil, "", fc, fmt.Errorf("%s: Error in user declaration: %v", fc.userAt[at], err)
	}
	out := make(settings, len(vals))
	for name, v := range vals {
		out[name] = *v
	}
	return out, *configFile, fc, nil
}

// splitRedisArgs takes out of args the Redis parameters given as flags the
// way redis-server takes them ("--save ” --appendonly no", "--save 900 1":
// a parameter's value is every argument up to the next "--"), and returns
// the rest for the flag package and the taken ones as config file lines.
// Persimmon's own flags (directives) stay flags.
func splitRedisArgs(args []string, own map[string]*string) (rest []string, conf string) {
	var b strings.Builder
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(a, "-")
		if !strings.HasPrefix(a, "--") || strings.Contains(name, "=") || own[name] != nil || name == "config" || name == "help" || name == "" {
			rest = append(rest, a)
			continue
		}
		if _, _, ok, _ := server.CheckConfigLine(name, []string{""}); !ok && name != "rename-command" && name != "user" {
			rest = append(rest, a) // not a Redis parameter either: the flag package says so
			continue
		}
		b.WriteString(name)
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			i++
			b.WriteString(" \"")
			b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(args[i]))
			b.WriteString("\"")
		}
		b.WriteByte('\n')
	}
	return rest, b.String()
}

// fileConfig is what a config file holds besides the directives: the
// settings of the other CONFIG parameters, validated as redis-server's
// loader does, and the notes to log on what Persimmon does instead of the
// mechanisms some of them name.
type fileConfig struct {
	params []server.ConfigLine
	notes  []string
	// renames are the rename-command lines in order, renameAt where
	// each one is ("file:line").
	renames  []server.CommandRename
	renameAt []string
	// users are the user lines (name and rules), userAt where each is.
	users  [][]string
	userAt []string
}

// parseConfigFile reads redis.conf-style lines: "name value...", '#'
// comments, values quoted as in redis.conf. The directives of the table
// above set settings; every other line must set a Redis 7.0 CONFIG
// parameter with a value redis-server would accept (so a redis.conf that
// redis-server 7.0 starts with starts Persimmon); "save" and
// "client-output-buffer-limit" may be given several times and add up, as
// in Redis. Anything else is refused with the file and line, as
// redis-server refuses it.
func parseConfigFile(r io.Reader, path string) (settings, fileConfig, error) {
	var fc fileConfig
	known := make(map[string]bool, len(directives))
	for _, d := range directives {
		known[d.name] = true
	}
	out := make(settings)
	// Multi-line parameters, gathered and checked once at the end.
	var save, obuf []string
	saveLine, obufLine := 0, 0
	saveFile, obufFile := path, path
	params := map[string]int{}                              // canonical name -> index in fc.params (a later line wins)
	var line1 func(path string, n int, args []string) error // one line that is not an include
	addParam := func(l server.ConfigLine, path, replaced string) {
		if i, ok := params[l.Name]; ok {
			fc.params[i] = l
		} else {
			params[l.Name] = len(fc.params)
			fc.params = append(fc.params, l)
		}
		if replaced != "" {
			fc.notes = append(fc.notes, fmt.Sprintf("%s: %s %q: %s", path, l.Name, l.Value, replaced))
		}
	}
	var read func(r io.Reader, path string, depth int) error
	read = func(r io.Reader, path string, depth int) error {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || line[0] == '#' {
				continue
			}
			args, err := proto.SplitArgs(line)
			if err != nil {
				return fmt.Errorf("%s:%d: %v", path, n, err)
			}
			if len(args) == 0 {
				continue
			}
			if strings.EqualFold(args[0], "include") && len(args) == 2 {
				if depth >= maxIncludeDepth {
					return fmt.Errorf("%s:%d: include: more than %d nested includes", path, n, maxIncludeDepth)
				}
				if err := includeConfig(args[1], func(r io.Reader, name string) error { return read(r, name, depth+1) }); err != nil {
					return fmt.Errorf("%s:%d: %v", path, n, err)
				}
				continue
			}
			if err := line1(path, n, args); err != nil {
				return err
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		return nil
	}
	line1 = func(path string, n int, args []string) error {
		name := strings.ToLower(args[0])
		switch {
		case name == "rename-command" && len(args) == 3:
			fc.renames = append(fc.renames, server.CommandRename{From: args[1], To: args[2]})
			fc.renameAt = append(fc.renameAt, fmt.Sprintf("%s:%d", path, n))
			return nil
		case name == "user" && len(args) >= 2:
			fc.users = append(fc.users, args[1:])
			fc.userAt = append(fc.userAt, fmt.Sprintf("%s:%d", path, n))
			return nil
		case name == "save":
			if len(args) == 2 && args[1] == "" {
				save = save[:0]
			} else {
				save = append(save, args[1:]...)
			}
			saveLine, saveFile = n, path
			return nil
		case name == "client-output-buffer-limit":
			obuf = append(obuf, args[1:]...)
			obufLine, obufFile = n, path
			return nil
		case name == "bind" && len(args) >= 2:
			out[name] = strings.Join(args[1:], " ")
		case known[name] && len(args) == 2:
			out[name] = args[1]
		case known[name]:
			return fmt.Errorf("%s:%d: %s takes one value", path, n, name)
		}
		l, replaced, ok, err := server.CheckConfigLine(name, args[1:])
		switch {
		case !ok && known[name]:
			return nil // Persimmon's own directive (io, threads...)
		case !ok:
			return fmt.Errorf("%s:%d: Bad directive or wrong number of arguments: %q", path, n, args[0])
		case err != nil:
			return fmt.Errorf("%s:%d: %s: %v", path, n, args[0], err)
		}
		addParam(l, path, replaced)
		return nil
	}
	if err := read(r, path, 0); err != nil {
		return nil, fc, err
	}
	for _, m := range []struct {
		name string
		args []string
		file string
		line int
	}{{"save", save, saveFile, saveLine}, {"client-output-buffer-limit", obuf, obufFile, obufLine}} {
		if m.line == 0 {
			continue
		}
		l, replaced, _, err := server.CheckConfigLine(m.name, []string{strings.Join(m.args, " ")})
		if err != nil {
			return nil, fc, fmt.Errorf("%s:%d: %s: %v", m.file, m.line, m.name, err)
		}
		addParam(l, m.file, replaced)
	}
	return out, fc, nil
}

// maxIncludeDepth bounds nested includes, so a file that includes itself
// is an error instead of a stack overflow (redis-server recurses until it
// crashes).
const maxIncludeDepth = 16

// includeConfig reads the file an "include" line names, as Redis 7.0's
// loadServerConfig does: a name with a wildcard (*, ? or [) is a pattern
// and every file it matches is read in name order, none being no error (an
// empty conf.d); a plain name must open.
func includeConfig(name string, read func(r io.Reader, path string) error) error {
	files := []string{name}
	if strings.ContainsAny(name, "*?[") {
		var err error
		if files, err = filepath.Glob(name); err != nil {
			return fmt.Errorf("include %q: %v", name, err)
		}
	}
	for _, f := range files {
		h, err := os.Open(f)
		if err != nil {
			return fmt.Errorf("Fatal error, can't open config file '%s': %v", f, errors.Unwrap(err))
		}
		err = read(h, f)
		h.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// buildConfig validates the settings into the server's and recovery's
// configurations.
func buildConfig(s settings) (server.Config, recovery.Options, error) {
	var cfg server.Config
	var opts recovery.Options
	port, err := strconv.Atoi(s["port"])
	if err != nil || port < 0 || port > 65535 {
		return cfg, opts, fmt.Errorf("port %q: want 0..65535", s["port"])
	}
	mode, err := pmem.ParseMode(s["durability"])
	if err != nil {
		return cfg, opts, err
	}
	segSize, err := server.ParseMemory(s["segment-size"])
	if err != nil || segSize <= 0 {
		return cfg, opts, fmt.Errorf("segment-size %q: want a size such as 64mb", s["segment-size"])
	}
	protected, err := yesNo(s["protected-mode"])
	if err != nil {
		return cfg, opts, fmt.Errorf("protected-mode: %v", err)
	}
	maxBulk, err := server.ParseMemory(s["proto-max-bulk-len"])
	if err != nil || maxBulk < 1<<20 {
		return cfg, opts, fmt.Errorf("proto-max-bulk-len %q: want a size of at least 1mb", s["proto-max-bulk-len"])
	}
	maxClients, err := strconv.Atoi(s["maxclients"])
	if err != nil || maxClients < 1 {
		return cfg, opts, fmt.Errorf("maxclients %q: want a positive number", s["maxclients"])
	}
	timeout, err := strconv.Atoi(s["timeout"])
	if err != nil || timeout < 0 {
		return cfg, opts, fmt.Errorf("timeout %q: want seconds, 0 for none", s["timeout"])
	}
	io, err := ioModel(s["io"], mode)
	if err != nil {
		return cfg, opts, err
	}
	keyIndex, err := yesNo(s["key-index"])
	if err != nil {
		return cfg, opts, fmt.Errorf("key-index: %v", err)
	}
	cfg = server.Config{
		Bind:            s["bind"],
		Port:            port,
		Requirepass:     s["requirepass"],
		ACLFile:         s["aclfile"],
		ProtectedMode:   protected,
		ProtoMaxBulkLen: maxBulk,
		MaxClients:      maxClients,
		Timeout:         timeout,
		Dir:             s["dir"],
		Durability:      mode.String(),
		SegmentSize:     segSize,
		IO:              io,
	}
	opts = recovery.Options{Dir: s["dir"], Mode: mode, SegmentSize: segSize, NoKeyIndex: !keyIndex}
	return cfg, opts, nil
}

func yesNo(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "yes":
		return true, nil
	case "no":
		return false, nil
	}
	return false, fmt.Errorf("%q: want yes or no", v)
}
