package lualib

import (
	lua "github.com/yuin/gopher-lua"
)

// CallTarget describes, as Lua 5.1's getobjname does for its error
// messages, what the function called on a line of proto is: "global
// 'foo'", "field 'register_function'", "method 'bar'", "local 'f'" or
// "upvalue 'g'" ("attempt to call field 'register_function' (a nil
// value)"). gopher-lua's VM says only "attempt to call a non-function
// object" and does not expose the failing instruction, so the call is
// found by its line: it answers ok only when every call instruction on
// the line calls the same description (one call per line is the common
// case), and when the register's origin is found by walking back from the
// call without crossing a jump.
func CallTarget(proto *lua.FunctionProto, line int) (desc string, ok bool) {
	if proto == nil {
		return "", false
	}
	for pc, inst := range proto.Code {
		if pc >= len(proto.DbgSourcePositions) || proto.DbgSourcePositions[pc] != line {
			continue
		}
		if op := int(inst >> 26); op != lua.OP_CALL && op != lua.OP_TAILCALL {
			continue
		}
		d, found := registerOrigin(proto, pc, int(inst>>18)&0xff)
		if !found || (desc != "" && d != desc) {
			return "", false
		}
		desc = d
	}
	return desc, desc != ""
}

// IndexTarget describes, as Lua 5.1 does in "attempt to index field 'a'
// (a nil value)", the value a line of proto indexed with the string key
// (gopher-lua's message names the key: "attempt to index a non-table
// object(nil) with key 'b'"). ok only when every read or write of that
// key on the line indexes the same description.
func IndexTarget(proto *lua.FunctionProto, line int, key string) (desc string, ok bool) {
	if proto == nil {
		return "", false
	}
	for pc, inst := range proto.Code {
		if pc >= len(proto.DbgSourcePositions) || proto.DbgSourcePositions[pc] != line {
			continue
		}
		op := int(inst >> 26)
		a, b, c := int(inst>>18)&0xff, int(inst&0x1ff), int(inst>>9)&0x1ff
		var table, k int
		switch op {
		case lua.OP_GETTABLE, lua.OP_GETTABLEKS, lua.OP_SELF:
			table, k = b, c
		case lua.OP_SETTABLE, lua.OP_SETTABLEKS:
			table, k = a, b
		default:
			continue
		}
		if s, isStr := keyString(proto, pc, k); !isStr || s != key {
			continue
		}
		d, found := registerOrigin(proto, pc, table)
		if !found || (desc != "" && d != desc) {
			return "", false
		}
		desc = d
	}
	return desc, desc != ""
}

// keyString is the string an RK operand of instruction pc holds: a
// constant, or a register loaded with one just before (gopher-lua loads
// SETTABLEKS keys that way).
func keyString(proto *lua.FunctionProto, pc, k int) (string, bool) {
	if k&0x100 != 0 {
		return constantAt(proto, k&^0x100)
	}
	for p := pc - 1; p >= 0; p-- {
		inst := proto.Code[p]
		op, a := int(inst>>26), int(inst>>18)&0xff
		if op == lua.OP_LOADK && a == k {
			return constantAt(proto, int(inst&0x3ffff))
		}
		if op == lua.OP_JMP || writes(op, a, int(inst&0x1ff), int(inst>>9)&0x1ff, k) {
			return "", false
		}
	}
	return "", false
}

func constantAt(proto *lua.FunctionProto, k int) (string, bool) {
	if k < len(proto.Constants) {
		if s, ok := proto.Constants[k].(lua.LString); ok {
			return string(s), true
		}
	}
	return "", false
}

// registerOrigin names what register reg holds before instruction pc.
func registerOrigin(proto *lua.FunctionProto, pc, reg int) (string, bool) {
	if name := localName(proto, reg, pc); name != "" {
		return "local '" + name + "'", true
	}
	w, ok := lastWrite(proto, pc, reg)
	if !ok {
		return "", false
	}
	switch w.op {
	case lua.OP_GETGLOBAL:
		return constantName(proto, w.bx, "global")
	case lua.OP_GETTABLE, lua.OP_GETTABLEKS:
		if w.c&0x100 != 0 {
			return constantName(proto, w.c&^0x100, "field")
		}
	case lua.OP_SELF:
		if w.a == reg && w.c&0x100 != 0 {
			return constantName(proto, w.c&^0x100, "method")
		}
	case lua.OP_GETUPVAL:
		if w.b < len(proto.DbgUpvalues) {
			return "upvalue '" + proto.DbgUpvalues[w.b] + "'", true
		}
	case lua.OP_MOVE:
		if w.b < w.a {
			return registerOrigin(proto, w.pc, w.b)
		}
	}
	return "", false
}

// instruction is one decoded Lua 5.1 instruction at pc: its opcode and
// fields A, B, C and Bx.
type instruction struct {
	pc, op, a, b, c, bx int
}

// lastWrite finds the instruction that last set register reg before pc on
// the straight line of code above it: ok is false if none does, or if a
// jump, test or loop comes first (another path may have set it).
func lastWrite(proto *lua.FunctionProto, pc, reg int) (instruction, bool) {
	for p := pc - 1; p >= 0; p-- {
		inst := proto.Code[p]
		w := instruction{pc: p, op: int(inst >> 26), a: int(inst>>18) & 0xff,
			b: int(inst & 0x1ff), c: int(inst>>9) & 0x1ff, bx: int(inst & 0x3ffff)}
		switch w.op {
		case lua.OP_JMP, lua.OP_EQ, lua.OP_LT, lua.OP_LE, lua.OP_TEST, lua.OP_TESTSET,
			lua.OP_FORLOOP, lua.OP_FORPREP, lua.OP_TFORLOOP, lua.OP_LOADBOOL:
			return instruction{}, false
		}
		if writes(w.op, w.a, w.b, w.c, reg) {
			return w, true
		}
	}
	return instruction{}, false
}

// writes reports whether an instruction sets register reg.
func writes(op, a, b, c, reg int) bool {
	switch op {
	case lua.OP_MOVE, lua.OP_LOADK, lua.OP_GETUPVAL, lua.OP_GETGLOBAL, lua.OP_GETTABLE, lua.OP_GETTABLEKS,
		lua.OP_NEWTABLE, lua.OP_ADD, lua.OP_SUB, lua.OP_MUL, lua.OP_DIV, lua.OP_MOD, lua.OP_POW,
		lua.OP_UNM, lua.OP_NOT, lua.OP_LEN, lua.OP_CONCAT, lua.OP_CLOSURE:
		return a == reg
	case lua.OP_MOVEN:
		return reg >= a && reg <= a+c
	case lua.OP_LOADNIL:
		return reg >= a && reg <= b
	case lua.OP_SELF:
		return reg == a || reg == a+1
	case lua.OP_CALL:
		return reg >= a // results, and the registers the call used
	case lua.OP_VARARG:
		return reg >= a
	}
	return false
}

// localName is the name of the local variable in register reg at pc, or "".
func localName(proto *lua.FunctionProto, reg, pc int) string {
	n := 0
	for _, l := range proto.DbgLocals {
		if l.StartPc > pc {
			break
		}
		if pc < l.EndPc {
			if n == reg {
				if l.Name == "" || l.Name[0] == '(' {
					return "" // an internal variable (for loops)
				}
				return l.Name
			}
			n++
		}
	}
	return ""
}

func constantName(proto *lua.FunctionProto, k int, kind string) (string, bool) {
	if s, ok := constantAt(proto, k); ok {
		return kind + " '" + s + "'", true
	}
	return "", false
}

// SetsGlobals reports whether proto or any function nested in it
// assigns a global variable (has a SETGLOBAL instruction; a global
// function declaration is one too). Code that does not can run with the
// globals table itself as its environment when that table refuses new
// names and changes only through proxies: its global reads then take one
// table lookup where a read-only view's __index takes two.
func SetsGlobals(proto *lua.FunctionProto) bool {
	for _, inst := range proto.Code {
		if int(inst>>26) == lua.OP_SETGLOBAL {
			return true
		}
	}
	for _, p := range proto.FunctionPrototypes {
		if SetsGlobals(p) {
			return true
		}
	}
	return false
}
