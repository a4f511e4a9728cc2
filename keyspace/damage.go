package keyspace

import (
	"errors"
	"fmt"
)

// Damage met while serving.
//
// Recovery re-validates only the log written after the key index's
// checkpoint; a slot the checkpoint covers is trusted, so damage to the
// data directory afterwards (a segment file deleted or cut short behind
// the server's back, bytes changed in one) surfaces only when a key's
// slot is read. Such a key is answered with ErrDamaged, never served as
// missing and never a crash: its entry holds a damagedValue, the damage is
// logged once per location (SetLogf) and counted (Stats.DamagedKeys).
// Writing the key (SET, DEL) replaces the slot as for any key. RENAME,
// MOVE and COPY of it answer the damage and change nothing (CopyValue
// fails the batch): a rename would otherwise delete the source and leave
// nothing in its place.
// persimmon-check verify finds the same damage offline.

// ErrDamaged is the error a read of a key whose stored value cannot be read
// answers (wrapped with the key's location and the cause).
var ErrDamaged = errors.New("ERR the value of this key is damaged in the data directory (see the server log; persimmon-check verify checks the directory)")

// damagedValue stands for the unreadable value of a key. It has no
// operations to rebuild; CopyValue refuses it.
type damagedValue struct{ err error }

func (d *damagedValue) typeName() string                       { return TypeString }
func (d *damagedValue) length() int                            { return 1 }
func (d *damagedValue) liveBytes() int64                       { return 0 }
func (d *damagedValue) rebuild(*Keyspace, *Batch, int, []byte) {}

// damagedEntry is kixEntry's entry for the slot at loc whose operation o
// (zero if it did not decode) cannot be read for err.
func (ks *Keyspace) damagedEntry(key string, loc uint64, o op, err error) *entry {
	err = fmt.Errorf("%w: location %d:%d: %v", ErrDamaged, loc>>40, loc&(1<<40-1), err)
	ks.noteDamage(loc, []byte(key), err)
	return &entry{key: key, loc: loc, size: uint32(o.size), expireAt: o.expireAt, kix: true, obj: &object{coll: &damagedValue{err: err}}}
}

// noteDamage logs (once per location) and counts an unreadable operation
// (one the key index names, or a record the cleaner meets); key is the key
// looked up, if known.
func (ks *Keyspace) noteDamage(loc uint64, key []byte, err error) {
	if ks.damageLogged[loc] {
		return
	}
	if ks.damageLogged == nil {
		ks.damageLogged = map[uint64]bool{}
	}
	ks.damageLogged[loc] = true
	ks.damagedKeys.Add(1)
	if ks.logf == nil {
		return
	}
	if key != nil {
		ks.logf("DAMAGE: segment %d offset %d cannot be read (looking up %q): %v; run persimmon-check verify", loc>>40, loc&(1<<40-1), clip(key), err)
	} else {
		ks.logf("DAMAGE: segment %d offset %d cannot be read: %v; run persimmon-check verify", loc>>40, loc&(1<<40-1), err)
	}
}

// damageOf returns the error of e if it stands for a damaged value.
func damageOf(e *entry) error {
	if e != nil && e.obj != nil {
		if d, ok := e.obj.coll.(*damagedValue); ok {
			return d.err
		}
	}
	return nil
}

// SetLogf sets where the keyspace logs what it finds wrong while serving
// (damage); nil logs nothing. Call before serving.
func (ks *Keyspace) SetLogf(logf func(format string, args ...any)) { ks.logf = logf }
