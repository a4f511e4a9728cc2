package lualib

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// TestCallCandidates: in the error handler of a failed call, the line's
// calls are listed with their descriptions, and the values of those that
// can be read back (locals, globals, fields through __index tables,
// upvalues) are; a callable one is told from the one that failed.
func TestCallCandidates(t *testing.T) {
	for _, c := range []struct {
		src  string
		want string // desc=type for each candidate, "?" when not read back
	}{
		{"local t = 5 print() t()", "global 'print'=callable local 't'=number"},
		{"local t = {x = {}} t.x.y()", "field 'y'=nil"},
		{"local p = setmetatable({}, {__index = {f = 1}}) p.f()", "global 'setmetatable'=callable field 'f'=number"},
		{"local p = setmetatable({}, {__index = function() end}) p.f()", "global 'setmetatable'=callable field 'f'=?"},
		{"local u = 7 local function g() u() end g()", "upvalue 'u'=number"}, // level 1 is g
		{"(nil)()", "?"},
	} {
		L := lua.NewState()
		fn, err := L.Load(strings.NewReader(c.src), "user_script")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		handler := L.NewFunction(func(L *lua.LState) int {
			dbg, ok := L.GetStack(1)
			if !ok {
				return 1
			}
			f, err := L.GetInfo("lf", dbg, nil)
			lf, isL := f.(*lua.LFunction)
			if err != nil || !isL || lf.IsG {
				return 1
			}
			cands, ok := CallCandidates(lf.Proto, dbg.CurrentLine)
			if !ok {
				got = append(got, "?")
			}
			for _, cand := range cands {
				v, known := OperandValue(L, dbg, lf, cand.Operand)
				switch {
				case !known:
					got = append(got, cand.Desc+"=?")
				case Callable(L, v):
					got = append(got, cand.Desc+"=callable")
				default:
					got = append(got, cand.Desc+"="+v.Type().String())
				}
			}
			return 1
		})
		L.Push(fn)
		if err := L.PCall(0, 0, handler); err == nil {
			t.Errorf("%s: no error", c.src)
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: %q, want %q", c.src, g, c.want)
		}
		L.Close()
	}
}
