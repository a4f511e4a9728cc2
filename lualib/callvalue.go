package lualib

import (
	lua "github.com/yuin/gopher-lua"
)

// Operand says where the value an instruction uses came from, so that
// an error handler can read it back: a local variable (its register), a
// global, an upvalue, or a field of another operand (t.x, t:x).
type Operand struct {
	Kind  OperandKind
	Index int      // OperandLocal: the register; OperandUpvalue: the upvalue's index
	Name  string   // OperandGlobal: the global; OperandField: the key
	Table *Operand // OperandField: the indexed value's operand, nil when unknown
}

// OperandKind is what an Operand names.
type OperandKind int

// The kinds of Operand.
const (
	OperandLocal OperandKind = iota
	OperandGlobal
	OperandUpvalue
	OperandField
)

// CallCandidate is one call instruction on a line: what it calls as Lua
// 5.1 describes it ("local 'f'"), and where that value is.
type CallCandidate struct {
	Desc    string
	Operand *Operand
}

// CallCandidates lists the call instructions on a line of proto with
// what each calls. ok is false when a call's origin cannot be found (so
// no candidate can be ruled the one that failed by elimination alone).
func CallCandidates(proto *lua.FunctionProto, line int) (cands []CallCandidate, ok bool) {
	if proto == nil {
		return nil, false
	}
	for pc, inst := range proto.Code {
		if pc >= len(proto.DbgSourcePositions) || proto.DbgSourcePositions[pc] != line {
			continue
		}
		if op := int(inst >> 26); op != lua.OP_CALL && op != lua.OP_TAILCALL {
			continue
		}
		reg := int(inst>>18) & 0xff
		desc, found := registerOrigin(proto, pc, reg)
		if !found {
			return nil, false
		}
		cands = append(cands, CallCandidate{Desc: desc, Operand: registerOperand(proto, pc, reg, 0)})
	}
	return cands, len(cands) > 0
}

// registerOperand is registerOrigin's source as an Operand: nil when the
// value cannot be read back.
func registerOperand(proto *lua.FunctionProto, pc, reg, depth int) *Operand {
	if depth > 8 {
		return nil
	}
	if name := localName(proto, reg, pc); name != "" {
		return &Operand{Kind: OperandLocal, Index: reg}
	}
	w, ok := lastWrite(proto, pc, reg)
	if !ok {
		return nil
	}
	switch w.op {
	case lua.OP_GETGLOBAL:
		if s, ok := constantAt(proto, w.bx); ok {
			return &Operand{Kind: OperandGlobal, Name: s}
		}
	case lua.OP_GETTABLE, lua.OP_GETTABLEKS:
		if s, ok := constantAt(proto, w.c&^0x100); ok && w.c&0x100 != 0 {
			return &Operand{Kind: OperandField, Name: s, Table: registerOperand(proto, w.pc, w.b, depth+1)}
		}
	case lua.OP_SELF:
		if s, ok := constantAt(proto, w.c&^0x100); ok && w.a == reg && w.c&0x100 != 0 {
			return &Operand{Kind: OperandField, Name: s, Table: registerOperand(proto, w.pc, w.b, depth+1)}
		}
	case lua.OP_GETUPVAL:
		return &Operand{Kind: OperandUpvalue, Index: w.b}
	case lua.OP_MOVE:
		if w.b < w.a {
			return registerOperand(proto, w.pc, w.b, depth+1)
		}
	}
	return nil
}

// OperandValue reads op's value in the Lua function fn running at dbg
// (an error handler's view of the frame that raised): ok is false when
// it cannot be known without running Lua code (an __index function).
func OperandValue(L *lua.LState, dbg *lua.Debug, fn *lua.LFunction, op *Operand) (lua.LValue, bool) {
	if op == nil {
		return nil, false
	}
	switch op.Kind {
	case OperandLocal:
		if name, v := L.GetLocal(dbg, op.Index+1); name != "" {
			return v, true
		}
	case OperandGlobal:
		if fn.Env != nil {
			return rawLookup(fn.Env, op.Name)
		}
	case OperandUpvalue:
		if name, v := L.GetUpvalue(fn, op.Index+1); name != "" {
			return v, true
		}
	case OperandField:
		if t, ok := OperandValue(L, dbg, fn, op.Table); ok {
			if tb, ok := t.(*lua.LTable); ok {
				return rawLookup(tb, op.Name)
			}
		}
	}
	return nil, false
}

// rawLookup is t[key] where only tables stand in __index (no function
// runs): ok is false when an __index function would decide.
func rawLookup(t *lua.LTable, key string) (lua.LValue, bool) {
	for range 16 {
		if v := t.RawGetString(key); v != lua.LNil {
			return v, true
		}
		mt, ok := t.Metatable.(*lua.LTable)
		if !ok {
			return lua.LNil, true
		}
		switch idx := mt.RawGetString("__index").(type) {
		case *lua.LTable:
			t = idx
		case *lua.LNilType:
			return lua.LNil, true
		default:
			return nil, false
		}
	}
	return nil, false
}

// Callable reports whether calling v would not raise "attempt to call":
// a function, or a value whose metatable's __call is one.
func Callable(L *lua.LState, v lua.LValue) bool {
	if v.Type() == lua.LTFunction {
		return true
	}
	return L.GetMetaField(v, "__call").Type() == lua.LTFunction
}
