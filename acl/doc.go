// Package acl is Persimmon's access control: users, their rules, the
// permission check run before every command, the ACL LOG, and the aclfile
// format, all as Redis 7.0 defines them.
//
// What it owns:
//
//   - Users (Store, User): on/off, passwords (kept as lowercase SHA-256 hex,
//     as Redis keeps them), nopass, a root selector and further selectors.
//   - Rules (User.Set through Store.SetUser): the words of ACL SETUSER and of
//     an aclfile line, with Redis's error texts.
//   - The printed forms: ACL LIST's rule strings (Describe), ACL GETUSER's
//     fields (Info), ACL CAT, in Redis 7.0's normalised order.
//   - The check (User.Check): a command (or subcommand) with its key and
//     channel positions, allowed or the Denial with Redis's NOPERM texts.
//   - The ACL LOG (Log) with Redis's entry merging.
//   - The aclfile (LoadFile, SaveFile, Store.Dump): Redis's line format and
//     load errors; Dump is also the durable form of the whole ACL state,
//     the state file of the data directory (SaveState, LoadState; see
//     state.go for its replacement discipline and start-up order).
//
// What it does not own: the command table. The server passes its own
// table (names, subcommands, ACL categories, the no-auth flag) to NewTable,
// so there is one copy of the command→category mapping. Key and channel
// positions of a request come from the server too (Request). Nothing here
// reads the network, the keyspace or the wal: the package imports only the
// standard library. The server makes each ACL change durable before it
// replies by writing the state file (state.go) through SaveState.
//
// Order of single commands. Redis 7.0 prints the single-command part of a
// rule string (after +@all/-@all and the categories) in the iteration order
// of its command dictionary, which is seeded at random per process: the same
// user prints its +get +set in a different order after a restart. Here that
// part follows the order of the table given to NewTable; the categories,
// chosen by Redis's best-fit loop over its fixed category order, come out
// exactly as Redis prints them.
//
// Concurrency. A Store serialises its writers with a mutex. A User is a
// stable handle that connections keep: its rules are an immutable value
// behind an atomic pointer, swapped whole by SETUSER, so Check takes no
// lock and a changed user applies from the next command, as in Redis.
package acl
