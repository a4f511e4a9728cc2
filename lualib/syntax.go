package lualib

import (
	"fmt"
	"strconv"
)

// CheckSyntax reads src as Lua 5.1's lexer and parser do (llex.c,
// lparser.c) and returns the first syntax error in their words, as
// "<chunk>:<line>: <message> near '<token>'" ("user_script:1: unexpected
// symbol near '<eof>'"), or nil. It checks the grammar only (no code
// limits such as the number of locals or upvalues): gopher-lua compiles
// the script afterwards, and its parser words errors differently and
// accepts Lua 5.2 syntax (goto, labels) that Redis's Lua 5.1 refuses.
func CheckSyntax(src []byte, chunk string) error {
	p := &syntaxParser{lex: lexer{src: src, line: 1, chunk: chunk}}
	return p.run()
}

// SyntaxError is a Lua 5.1 compile error.
type SyntaxError struct{ Msg string }

func (e *SyntaxError) Error() string { return e.Msg }

// Token kinds: single characters are their byte value; the rest follow.
const (
	tkAnd = 257 + iota
	tkBreak
	tkDo
	tkElse
	tkElseif
	tkEnd
	tkFalse
	tkFor
	tkFunction
	tkIf
	tkIn
	tkLocal
	tkNil
	tkNot
	tkOr
	tkRepeat
	tkReturn
	tkThen
	tkTrue
	tkUntil
	tkWhile
	tkConcat
	tkDots
	tkEq
	tkGE
	tkLE
	tkNE
	tkNumber
	tkName
	tkString
	tkEOS
)

var tokenNames = [...]string{"and", "break", "do", "else", "elseif", "end", "false", "for", "function",
	"if", "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
	"..", "...", "==", ">=", "<=", "~=", "<number>", "<name>", "<string>", "<eof>"}

var reserved = func() map[string]int {
	m := make(map[string]int)
	for i := tkAnd; i <= tkWhile; i++ {
		m[tokenNames[i-tkAnd]] = i
	}
	return m
}()

func tokenString(t int) string {
	if t < 257 {
		if t < 32 || t == 127 {
			return fmt.Sprintf("char(%d)", t)
		}
		return string([]byte{byte(t)})
	}
	return tokenNames[t-257]
}

type lexToken struct {
	kind int
	text string // the token's source text, for names, numbers and strings
}

type lexer struct {
	src   []byte
	pos   int
	line  int
	chunk string
	buf   []byte // the text of the token read last (txtToken)
}

type syntaxPanic struct{ err *SyntaxError }

func (l *lexer) cur() int {
	if l.pos < len(l.src) {
		return int(l.src[l.pos])
	}
	return -1
}

func (l *lexer) fail(msg string, tok int) {
	text := fmt.Sprintf("%s:%d: %s", l.chunk, l.line, msg)
	if tok != 0 {
		near := tokenString(tok)
		if tok == tkName || tok == tkString || tok == tkNumber {
			near = string(l.buf)
		}
		text += " near '" + near + "'"
	}
	panic(syntaxPanic{&SyntaxError{Msg: text}})
}

func (l *lexer) saveNext() {
	l.buf = append(l.buf, l.src[l.pos])
	l.pos++
}

func isNewline(c int) bool { return c == '\n' || c == '\r' }

// newline is inclinenumber: \n, \r, \n\r and \r\n are one line each.
func (l *lexer) newline() {
	old := l.cur()
	l.pos++
	if c := l.cur(); isNewline(c) && c != old {
		l.pos++
	}
	l.line++
}

func isAlpha(c int) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || c == '_' }
func isDig(c int) bool   { return '0' <= c && c <= '9' }

// longSep is skip_sep: after '[' or ']', the count of '=' if another
// bracket of the same kind follows, else -count-1.
func (l *lexer) longSep() int {
	s := l.cur()
	l.saveNext()
	count := 0
	for l.cur() == '=' {
		l.saveNext()
		count++
	}
	if l.cur() == s {
		return count
	}
	return -count - 1
}

func (l *lexer) longString(sep int, comment bool) {
	l.saveNext() // the second '['
	if isNewline(l.cur()) {
		l.newline()
	}
	for {
		switch c := l.cur(); {
		case c < 0:
			if comment {
				l.fail("unfinished long comment", tkEOS)
			}
			l.fail("unfinished long string", tkEOS)
		case c == '[':
			if l.longSep() == sep {
				l.saveNext() // Redis builds Lua without LUA_COMPAT_LSTR: no nesting
			}
		case c == ']':
			if l.longSep() == sep {
				l.saveNext()
				return
			}
		case isNewline(c):
			l.buf = append(l.buf, '\n')
			l.newline()
			if comment {
				l.buf = l.buf[:0]
			}
		default:
			if comment {
				l.pos++
			} else {
				l.saveNext()
			}
		}
	}
}

func (l *lexer) quoted(del int) {
	l.saveNext()
	for l.cur() != del {
		switch c := l.cur(); {
		case c < 0:
			l.fail("unfinished string", tkEOS)
		case isNewline(c):
			l.fail("unfinished string", tkString)
		case c == '\\':
			l.pos++ // the backslash is not kept: the buffer holds the string's bytes
			switch e := l.cur(); {
			case e < 0:
				continue // the loop reports the unfinished string
			case isNewline(e):
				l.buf = append(l.buf, '\n')
				l.newline()
			case isDig(e):
				n := 0
				for i := 0; i < 3 && isDig(l.cur()); i++ {
					n = n*10 + l.cur() - '0'
					l.pos++
				}
				if n > 255 {
					l.fail("escape sequence too large", tkString)
				}
				l.buf = append(l.buf, byte(n))
			default:
				if t, ok := luaEscapes[byte(e)]; ok {
					e = int(t)
				}
				l.buf = append(l.buf, byte(e))
				l.pos++
			}
		default:
			l.saveNext()
		}
	}
	l.saveNext()
}

var luaEscapes = map[byte]byte{'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v'}

func (l *lexer) numeral() {
	for isDig(l.cur()) || l.cur() == '.' {
		l.saveNext()
	}
	if c := l.cur(); c == 'E' || c == 'e' {
		l.saveNext()
		if c := l.cur(); c == '+' || c == '-' {
			l.saveNext()
		}
	}
	for c := l.cur(); isAlpha(c) || isDig(c); c = l.cur() {
		l.saveNext()
	}
	if _, ok := StringNumber(string(l.buf)); !ok {
		l.fail("malformed number", tkNumber)
	}
}

// next is llex: the next token.
func (l *lexer) next() lexToken {
	l.buf = l.buf[:0]
	for {
		c := l.cur()
		switch {
		case c < 0:
			return lexToken{kind: tkEOS}
		case isNewline(c):
			l.newline()
		case c == '-':
			l.pos++
			if l.cur() != '-' {
				return lexToken{kind: '-'}
			}
			l.pos++
			if l.cur() == '[' {
				sep := l.longSep()
				l.buf = l.buf[:0]
				if sep >= 0 {
					l.longString(sep, true)
					l.buf = l.buf[:0]
					continue
				}
			}
			for c := l.cur(); c >= 0 && !isNewline(c); c = l.cur() {
				l.pos++
			}
		case c == '[':
			sep := l.longSep()
			if sep >= 0 {
				l.longString(sep, false)
				return lexToken{kind: tkString, text: string(l.buf)}
			}
			if sep != -1 {
				l.fail("invalid long string delimiter", tkString)
			}
			return lexToken{kind: '['}
		case c == '=' || c == '<' || c == '>' || c == '~':
			l.pos++
			if l.cur() != '=' {
				return lexToken{kind: c}
			}
			l.pos++
			return lexToken{kind: map[int]int{'=': tkEq, '<': tkLE, '>': tkGE, '~': tkNE}[c]}
		case c == '"' || c == '\'':
			l.quoted(c)
			return lexToken{kind: tkString, text: string(l.buf)}
		case c == '.':
			l.saveNext()
			if l.cur() == '.' {
				l.saveNext()
				if l.cur() == '.' {
					l.saveNext()
					return lexToken{kind: tkDots}
				}
				return lexToken{kind: tkConcat}
			}
			if !isDig(l.cur()) {
				return lexToken{kind: '.'}
			}
			l.numeral()
			return lexToken{kind: tkNumber, text: string(l.buf)}
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			l.pos++
		case isDig(c):
			l.numeral()
			return lexToken{kind: tkNumber, text: string(l.buf)}
		case isAlpha(c):
			for c := l.cur(); isAlpha(c) || isDig(c); c = l.cur() {
				l.saveNext()
			}
			if k, ok := reserved[string(l.buf)]; ok {
				return lexToken{kind: k}
			}
			return lexToken{kind: tkName, text: string(l.buf)}
		default:
			l.pos++
			return lexToken{kind: c}
		}
	}
}

// syntaxParser is lparser.c's recursive descent without code generation.
type syntaxParser struct {
	lex       lexer
	t         lexToken
	ahead     *lexToken
	lastLine  int
	loops     []int // per function: enclosing loops
	varargs   []bool
	lastIsVar bool // the last primary expression is assignable
	lastCall  bool // the last primary expression is a call
}

func (p *syntaxParser) run() (err error) {
	defer func() {
		if r := recover(); r != nil {
			sp, ok := r.(syntaxPanic)
			if !ok {
				panic(r)
			}
			err = sp.err
		}
	}()
	p.loops = []int{0}
	p.varargs = []bool{true}
	p.next()
	p.chunk()
	p.check(tkEOS)
	return nil
}

func (p *syntaxParser) next() {
	p.lastLine = p.lex.line
	if p.ahead != nil {
		p.t, p.ahead = *p.ahead, nil
		return
	}
	p.t = p.lex.next()
}

func (p *syntaxParser) lookahead() int {
	if p.ahead == nil {
		t := p.lex.next()
		p.ahead = &t
	}
	return p.ahead.kind
}

func (p *syntaxParser) errorAt(msg string) {
	if p.t.kind == tkName || p.t.kind == tkString || p.t.kind == tkNumber {
		p.lex.buf = []byte(p.t.text)
	}
	p.lex.fail(msg, p.t.kind)
}

func (p *syntaxParser) expected(tok int) { p.errorAt("'" + tokenString(tok) + "' expected") }

func (p *syntaxParser) testNext(tok int) bool {
	if p.t.kind == tok {
		p.next()
		return true
	}
	return false
}

func (p *syntaxParser) check(tok int) {
	if p.t.kind != tok {
		p.expected(tok)
	}
}

func (p *syntaxParser) checkNext(tok int) {
	p.check(tok)
	p.next()
}

func (p *syntaxParser) checkMatch(what, who, line int) {
	if p.testNext(what) {
		return
	}
	if line == p.lex.line {
		p.expected(what)
	}
	p.errorAt("'" + tokenString(what) + "' expected (to close '" + tokenString(who) + "' at line " + strconv.Itoa(line) + ")")
}

func blockFollow(t int) bool {
	switch t {
	case tkElse, tkElseif, tkEnd, tkUntil, tkEOS:
		return true
	}
	return false
}

func (p *syntaxParser) chunk() {
	last := false
	for !last && !blockFollow(p.t.kind) {
		last = p.statement()
		p.testNext(';')
	}
}

func (p *syntaxParser) block() { p.chunk() }

func (p *syntaxParser) loopBlock() {
	p.loops[len(p.loops)-1]++
	p.block()
	p.loops[len(p.loops)-1]--
}

func (p *syntaxParser) statement() bool {
	line := p.lex.line
	switch p.t.kind {
	case tkIf:
		p.testThenBlock()
		for p.t.kind == tkElseif {
			p.testThenBlock()
		}
		if p.testNext(tkElse) {
			p.block()
		}
		p.checkMatch(tkEnd, tkIf, line)
	case tkWhile:
		p.next()
		p.expr()
		p.checkNext(tkDo)
		p.loopBlock()
		p.checkMatch(tkEnd, tkWhile, line)
	case tkDo:
		p.next()
		p.block()
		p.checkMatch(tkEnd, tkDo, line)
	case tkFor:
		p.next()
		p.checkName()
		switch p.t.kind {
		case '=':
			p.next()
			p.expr()
			p.checkNext(',')
			p.expr()
			if p.testNext(',') {
				p.expr()
			}
		case ',', tkIn:
			for p.testNext(',') {
				p.checkName()
			}
			p.checkNext(tkIn)
			p.exprList()
		default:
			p.errorAt("'=' or 'in' expected")
		}
		p.checkNext(tkDo)
		p.loopBlock()
		p.checkMatch(tkEnd, tkFor, line)
	case tkRepeat:
		p.next()
		p.loops[len(p.loops)-1]++
		p.chunk()
		p.checkMatch(tkUntil, tkRepeat, line)
		p.expr()
		p.loops[len(p.loops)-1]--
	case tkFunction:
		p.next()
		p.checkName()
		for p.t.kind == '.' {
			p.next()
			p.checkName()
		}
		if p.t.kind == ':' {
			p.next()
			p.checkName()
		}
		p.body(line)
	case tkLocal:
		p.next()
		if p.testNext(tkFunction) {
			p.checkName()
			p.body(line)
			break
		}
		p.checkName()
		for p.testNext(',') {
			p.checkName()
		}
		if p.testNext('=') {
			p.exprList()
		}
	case tkReturn:
		p.next()
		if !blockFollow(p.t.kind) && p.t.kind != ';' {
			p.exprList()
		}
		return true
	case tkBreak:
		p.next()
		if p.loops[len(p.loops)-1] == 0 {
			p.errorAt("no loop to break")
		}
		return true
	default:
		p.primaryExp()
		if !p.lastCall {
			p.assignment()
		}
	}
	return false
}

func (p *syntaxParser) testThenBlock() {
	p.next()
	p.expr()
	p.checkNext(tkThen)
	p.block()
}

func (p *syntaxParser) assignment() {
	if !p.lastIsVar {
		p.errorAt("syntax error")
	}
	if p.testNext(',') {
		p.primaryExp()
		p.assignment()
		return
	}
	p.checkNext('=')
	p.exprList()
}

func (p *syntaxParser) checkName() { p.checkNext(tkName) }

func (p *syntaxParser) body(line int) {
	p.loops = append(p.loops, 0)
	p.varargs = append(p.varargs, false)
	p.checkNext('(')
	if p.t.kind != ')' {
		for {
			switch p.t.kind {
			case tkName:
				p.next()
			case tkDots:
				p.next()
				p.varargs[len(p.varargs)-1] = true
			default:
				p.errorAt("<name> or '...' expected")
			}
			if p.varargs[len(p.varargs)-1] || !p.testNext(',') {
				break
			}
		}
	}
	p.checkNext(')')
	p.chunk()
	p.checkMatch(tkEnd, tkFunction, line)
	p.loops = p.loops[:len(p.loops)-1]
	p.varargs = p.varargs[:len(p.varargs)-1]
}

func (p *syntaxParser) exprList() {
	p.expr()
	for p.testNext(',') {
		p.expr()
	}
}

func (p *syntaxParser) expr() { p.subExpr() }

func isBinary(t int) bool {
	switch t {
	case '+', '-', '*', '/', '%', '^', tkConcat, tkEq, tkNE, '<', tkLE, '>', tkGE, tkAnd, tkOr:
		return true
	}
	return false
}

func (p *syntaxParser) subExpr() {
	for p.t.kind == tkNot || p.t.kind == '-' || p.t.kind == '#' {
		p.next()
	}
	p.simpleExp()
	for isBinary(p.t.kind) {
		p.next()
		p.subExpr()
	}
}

func (p *syntaxParser) simpleExp() {
	switch p.t.kind {
	case tkNumber, tkString, tkNil, tkTrue, tkFalse:
		p.next()
	case tkDots:
		if !p.varargs[len(p.varargs)-1] {
			p.errorAt("cannot use '...' outside a vararg function")
		}
		p.next()
	case '{':
		p.constructor()
	case tkFunction:
		line := p.lex.line
		p.next()
		p.body(line)
	default:
		p.primaryExp()
	}
}

func (p *syntaxParser) constructor() {
	line := p.lex.line
	p.checkNext('{')
	for p.t.kind != '}' {
		switch p.t.kind {
		case tkName:
			if p.lookahead() != '=' {
				p.expr()
			} else {
				p.next()
				p.checkNext('=')
				p.expr()
			}
		case '[':
			p.next()
			p.expr()
			p.checkNext(']')
			p.checkNext('=')
			p.expr()
		default:
			p.expr()
		}
		if !p.testNext(',') && !p.testNext(';') {
			break
		}
	}
	p.checkMatch('}', '{', line)
}

// primaryExp is prefixexp and its suffixes; it notes whether the result
// is assignable (a name or an index) or a call.
func (p *syntaxParser) primaryExp() {
	switch p.t.kind {
	case tkName:
		p.next()
		p.lastIsVar, p.lastCall = true, false
	case '(':
		line := p.lex.line
		p.next()
		p.expr()
		p.checkMatch(')', '(', line)
		p.lastIsVar, p.lastCall = false, false
	default:
		p.errorAt("unexpected symbol")
	}
	for {
		switch p.t.kind {
		case '.':
			p.next()
			p.checkName()
			p.lastIsVar, p.lastCall = true, false
		case '[':
			p.next()
			p.expr()
			p.checkNext(']')
			p.lastIsVar, p.lastCall = true, false
		case ':':
			p.next()
			p.checkName()
			p.funcArgs()
		case '(', tkString, '{':
			p.funcArgs()
		default:
			return
		}
	}
}

func (p *syntaxParser) funcArgs() {
	line := p.lex.line
	switch p.t.kind {
	case '(':
		if line != p.lastLine {
			p.errorAt("ambiguous syntax (function call x new statement)")
		}
		p.next()
		if p.t.kind != ')' {
			p.exprList()
		}
		p.checkMatch(')', '(', line)
	case '{':
		p.constructor()
	case tkString:
		p.next()
	default:
		p.errorAt("function arguments expected")
	}
	p.lastIsVar, p.lastCall = false, true
}

// ChunkID is Lua 5.1's luaO_chunkid as its lexer calls it (MAXSRC 80
// bytes): how a chunk named name (for loadstring, the source itself)
// appears in syntax errors: "=name" as name, "@file" as file, anything
// else as [string "first line..."] cut to fit.
func ChunkID(name string) string { return chunkID(name, 80) }

// RuntimeChunkID is luaO_chunkid as run-time errors call it (LUA_IDSIZE
// 60 bytes): how a chunk named name appears in the position of an error
// its code raises, which is cut shorter than in a syntax error.
func RuntimeChunkID(name string) string { return chunkID(name, 60) }

// chunkID is luaO_chunkid with a buffer of idSize bytes.
func chunkID(name string, idSize int) string {
	if i := indexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	switch {
	case len(name) > 0 && name[0] == '=':
		if len(name) > idSize {
			return name[1:idSize]
		}
		return name[1:]
	case len(name) > 0 && name[0] == '@':
		name = name[1:]
		room := idSize - len(" '...' ") - 1
		if len(name) > room {
			return "..." + name[len(name)-room:]
		}
		return name
	}
	room := idSize - len(` [string "..."] `) - 1
	n := len(name)
	for i := 0; i < len(name); i++ {
		if name[i] == '\n' || name[i] == '\r' {
			n = i
			break
		}
	}
	if n > room {
		n = room
	}
	if n < len(name) {
		return `[string "` + name[:n] + `..."]`
	}
	return `[string "` + name + `"]`
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}
