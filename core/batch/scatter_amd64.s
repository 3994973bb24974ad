#include "textflag.h"

// func scatterFast(recs, scratch, ids, counts unsafe.Pointer, n int)
//
// bucketSort's scatter (radix.go) in assembly: record i (32 bytes)
// goes to scratch at counts[ids[i]], which then moves on by one. The
// destinations are random over the scratch, 2^16 write heads at most, and
// a store that misses waits in the store buffer for its line, which soon
// fills: so each record first prefetches the slot that record i+32 will
// take (its bucket's count now, exact unless a record between them goes
// to the same bucket, which then leaves it a slot or two short, most
// often in the same line). Go has no prefetch to write this loop with.
// It moves the records before the last 32, whose successors 32 ahead
// exist; scatter (scatter_amd64.go) moves those 32 in Go.
//
// Registers: SI the records, DI the scratch, R8 the bucket numbers, R9
// the counts; DX n-32, AX the record's index; BX its bucket, R10 its
// slot, R11 and R12 the byte offsets of record and slot.
TEXT ·scatterFast(SB), NOSPLIT, $0-40
	MOVQ recs+0(FP), SI
	MOVQ scratch+8(FP), DI
	MOVQ ids+16(FP), R8
	MOVQ counts+24(FP), R9
	MOVQ n+32(FP), DX
	XORQ AX, AX
	SUBQ $32, DX

ahead:
	CMPQ AX, DX
	JGE done
	MOVWQZX 64(R8)(AX*2), BX
	MOVL (R9)(BX*4), BX
	SHLQ $5, BX
	PREFETCHT0 (DI)(BX*1)
	MOVWQZX (R8)(AX*2), BX
	MOVL (R9)(BX*4), R10
	MOVQ AX, R11
	SHLQ $5, R11
	MOVUPS (SI)(R11*1), X0
	MOVUPS 16(SI)(R11*1), X1
	MOVQ R10, R12
	SHLQ $5, R12
	MOVUPS X0, (DI)(R12*1)
	MOVUPS X1, 16(DI)(R12*1)
	INCL R10
	MOVL R10, (R9)(BX*4)
	INCQ AX
	JMP ahead

done:
	RET
