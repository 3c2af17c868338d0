//go:build amd64 && !purego

#include "textflag.h"

// func indexPairAVX2(b []byte, n, off1, off2 int, a1, b1, a2, b2 byte) int
//
// Returns the first i < n&^31 with b[i+off1] in {a1, b1} and b[i+off2] in {a2, b2}, or
// -1. The caller guarantees n >= 32 and n-1+off2 < len(b), so no load leaves b.
TEXT ·indexPairAVX2(SB), NOSPLIT, $0-64
	MOVQ b_base+0(FP), SI
	MOVQ n+24(FP), CX
	MOVQ off1+32(FP), R8
	MOVQ off2+40(FP), R9
	LEAQ (SI)(R8*1), R10 // b[off1:]
	LEAQ (SI)(R9*1), R11 // b[off2:]

	MOVBLZX a1+48(FP), AX
	MOVD AX, X0
	VPBROADCASTB X0, Y0
	MOVBLZX b1+49(FP), AX
	MOVD AX, X1
	VPBROADCASTB X1, Y1
	MOVBLZX a2+50(FP), AX
	MOVD AX, X2
	VPBROADCASTB X2, Y2
	MOVBLZX b2+51(FP), AX
	MOVD AX, X3
	VPBROADCASTB X3, Y3

	XORQ DI, DI // i

loop:
	LEAQ 32(DI), DX
	CMPQ DX, CX
	JA   notfound
	VMOVDQU (R10)(DI*1), Y4
	VMOVDQU (R11)(DI*1), Y5
	VPCMPEQB Y0, Y4, Y6
	VPCMPEQB Y1, Y4, Y7
	VPOR     Y6, Y7, Y6
	VPCMPEQB Y2, Y5, Y8
	VPCMPEQB Y3, Y5, Y9
	VPOR     Y8, Y9, Y8
	VPAND    Y6, Y8, Y6
	VPMOVMSKB Y6, AX
	TESTL AX, AX
	JNZ   found
	MOVQ DX, DI
	JMP  loop

found:
	BSFL AX, AX
	ADDQ DI, AX
	VZEROUPPER
	MOVQ AX, ret+56(FP)
	RET

notfound:
	VZEROUPPER
	MOVQ $-1, ret+56(FP)
	RET
