#include "textflag.h"

// The hash of a row's first column (hashFirst: splitmix64's finaliser of
// hashSeed ^ x) four rows at a time in ymm registers, with AVX-512's
// 64-bit multiply (VPMULLQ), compare and compress (VL, DQ), and BMI2's
// PDEP. The Go code calls these only where the CPU has them (shareAVX).

// func shareMasks2(rows *int64, groups int, masks *byte, shift, want uint64) int
//
// For each group of four rows of two columns (groups of them at rows),
// writes to masks a byte whose bit i is set when row i's first column
// hashes to a worker (the hash's bits from shift up) equal to want, and
// returns the number of bits set.
//
// Registers: SI the group, CX the groups left, DI the mask byte, R8 the
// count; Y10 the seed, Y11 the finaliser's increment, Y12 and Y13 its
// multipliers, Y14 want, X9 shift.
TEXT ·shareMasks2(SB), NOSPLIT, $0-48
	MOVQ rows+0(FP), SI
	MOVQ groups+8(FP), CX
	MOVQ masks+16(FP), DI
	MOVQ shift+24(FP), AX
	VMOVQ AX, X9
	MOVQ want+32(FP), AX
	VPBROADCASTQ AX, Y14
	MOVQ $0x9e3779b97f4a7c15, AX
	VPBROADCASTQ AX, Y10
	VPBROADCASTQ AX, Y11
	MOVQ $0xbf58476d1ce4e5b9, AX
	VPBROADCASTQ AX, Y12
	MOVQ $0x94d049bb133111eb, AX
	VPBROADCASTQ AX, Y13
	XORQ R8, R8
	TESTQ CX, CX
	JZ done

loop:
	// Y0 = [x0 v0 x1 v1], Y1 = [x2 v2 x3 v3] -> Y0 = [x0 x1 x2 x3].
	VMOVDQU 0(SI), Y0
	VMOVDQU 32(SI), Y1
	VPUNPCKLQDQ Y1, Y0, Y0
	VPERMQ $0xD8, Y0, Y0
	// z = (seed ^ x) + inc; z = (z ^ z>>30) * m1; z = (z ^ z>>27) * m2;
	// z ^= z>>31.
	VPXOR Y10, Y0, Y0
	VPADDQ Y11, Y0, Y0
	VPSRLQ $30, Y0, Y1
	VPXOR Y1, Y0, Y0
	VPMULLQ Y12, Y0, Y0
	VPSRLQ $27, Y0, Y1
	VPXOR Y1, Y0, Y0
	VPMULLQ Y13, Y0, Y0
	VPSRLQ $31, Y0, Y1
	VPXOR Y1, Y0, Y0
	VPSRLQ X9, Y0, Y0
	VPCMPEQQ Y14, Y0, K1
	KMOVB K1, AX
	MOVB AX, 0(DI)
	POPCNTL AX, AX
	ADDQ AX, R8
	ADDQ $64, SI
	INCQ DI
	DECQ CX
	JNZ loop

done:
	VZEROUPPER
	MOVQ R8, ret+40(FP)
	RET

// func compress2(src *shareCols, groups int, masks *byte, dst *shareCols)
//
// For each group of four updates of two-column rows (groups of them at
// src), appends to dst the updates whose bit is set in the group's mask
// byte, in order: each column's four values are compressed in a register
// and stored whole, so every column of dst must have room for four words
// past what is kept.
//
// Registers: AX, BX, CX the source rows, times and diffs; R9, R10, R11
// the destination's; R8 the groups left, DI the mask byte, R12 the kept
// updates, R13 the kept rows' words; R15 the doubling's PDEP mask; DX,
// SI, R14 scratch.
TEXT ·compress2(SB), NOSPLIT, $0-32
	MOVQ src+0(FP), DX
	MOVQ 0(DX), AX
	MOVQ 8(DX), BX
	MOVQ 16(DX), CX
	MOVQ groups+8(FP), R8
	MOVQ masks+16(FP), DI
	MOVQ dst+24(FP), DX
	MOVQ 0(DX), R9
	MOVQ 8(DX), R10
	MOVQ 16(DX), R11
	XORQ R12, R12
	XORQ R13, R13
	MOVQ $0x55, R15
	TESTQ R8, R8
	JZ cdone

cloop:
	MOVBLZX 0(DI), DX
	KMOVB DX, K1
	VMOVDQU 0(BX), Y0
	VPCOMPRESSQ Y0, K1, Y0
	VMOVDQU Y0, 0(R10)(R12*8)
	VMOVDQU 0(CX), Y1
	VPCOMPRESSQ Y1, K1, Y1
	VMOVDQU Y1, 0(R11)(R12*8)
	// Each row is two words: the mask's bits doubled, low half for the
	// first two rows, high half for the last two.
	PDEPQ R15, DX, R14
	LEAQ 0(R14)(R14*2), R14
	MOVQ R14, SI
	ANDQ $15, SI
	SHRQ $4, R14
	KMOVB SI, K2
	KMOVB R14, K3
	VMOVDQU 0(AX), Y2
	VMOVDQU 32(AX), Y3
	VPCOMPRESSQ Y2, K2, Y2
	VMOVDQU Y2, 0(R9)(R13*8)
	POPCNTL SI, SI
	ADDQ SI, R13
	VPCOMPRESSQ Y3, K3, Y3
	VMOVDQU Y3, 0(R9)(R13*8)
	POPCNTL R14, R14
	ADDQ R14, R13
	POPCNTL DX, DX
	ADDQ DX, R12
	ADDQ $64, AX
	ADDQ $32, BX
	ADDQ $32, CX
	INCQ DI
	DECQ R8
	JNZ cloop

cdone:
	VZEROUPPER
	RET
