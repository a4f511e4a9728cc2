#include "textflag.h"

// func cpuid(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL subleaf+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// Each loop: SI = base rounded down to 64, DX = base+len (exclusive end),
// AX counts lines. Every line holding a byte of b is written back once.

// func flushCLWB(b []byte) int
TEXT ·flushCLWB(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), DX
	XORQ AX, AX
	TESTQ DX, DX
	JZ   clwbdone
	ADDQ SI, DX
	ANDQ $-64, SI
clwbloop:
	CLWB (SI)
	ADDQ $64, SI
	INCQ AX
	CMPQ SI, DX
	JB   clwbloop
clwbdone:
	MOVQ AX, ret+24(FP)
	RET

// func flushCLFLUSHOPT(b []byte) int
TEXT ·flushCLFLUSHOPT(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), DX
	XORQ AX, AX
	TESTQ DX, DX
	JZ   optdone
	ADDQ SI, DX
	ANDQ $-64, SI
optloop:
	CLFLUSHOPT (SI)
	ADDQ $64, SI
	INCQ AX
	CMPQ SI, DX
	JB   optloop
optdone:
	MOVQ AX, ret+24(FP)
	RET

// func flushCLFLUSH(b []byte) int
TEXT ·flushCLFLUSH(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), DX
	XORQ AX, AX
	TESTQ DX, DX
	JZ   clfdone
	ADDQ SI, DX
	ANDQ $-64, SI
clfloop:
	CLFLUSH (SI)
	ADDQ $64, SI
	INCQ AX
	CMPQ SI, DX
	JB   clfloop
clfdone:
	MOVQ AX, ret+24(FP)
	RET

// func sfence()
TEXT ·sfence(SB), NOSPLIT, $0-0
	SFENCE
	RET
