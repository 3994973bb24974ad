#include "go_asm.h"
#include "textflag.h"

// func emitRangeFast(f *sealEmit)
//
// emitRange's loop (builder.go) for records after the first of the batch:
// each record's key, val, time and diff go to the columns without a
// branch, the key and val to the slot after the last one written whether
// or not they start a new one, and the counts move by whether they did;
// whether they do is a compare with the record before, in memory, so no
// register carries the last key and val.
//
// Every eighth record also prefetches, 128 records ahead, the slots of
// the six columns: the columns are memory a build has just allocated,
// last written builds ago and not in L2, and the hardware's prefetchers
// fetch six write streams late. A column's slot moves at most one a
// record, so eight records move it at most one 64-byte line of a 64-bit
// column and no line goes unfetched. BenchmarkBuild at 1e5 (full keys,
// the Intel Xeon host) read 1.32–1.35 of its radix limit without the
// prefetches and 1.25–1.27 with them at every record; every eighth read
// a little better again, and so did a seal of 1,000 updates, whose
// columns are in the caches (docs/engine-history.md, "A build checks its
// times in its sort's scan, and prefetches its columns"). A prefetch
// never faults, so those past a column's end are harmless.
//
// Registers: SI the record, DI the records' end; R8 the record's number
// (its update's); AX, BX the key and val columns, CX, DX the time and
// diff columns, R9, R10 the key and val offsets; R11, R12 the keys and
// vals written; R13, R14, R15 the record's key, val and the new-key flag.
TEXT ·emitRangeFast(SB), NOSPLIT, $0-8
	MOVQ f+0(FP), R15
	MOVQ sealEmit_rs(R15), SI
	MOVQ sealEmit_n(R15), DI
	SHLQ $5, DI
	ADDQ SI, DI
	MOVQ sealEmit_i(R15), R8
	MOVQ sealEmit_keys(R15), AX
	MOVQ sealEmit_vals(R15), BX
	MOVQ sealEmit_times(R15), CX
	MOVQ sealEmit_diffs(R15), DX
	MOVQ sealEmit_keyOffs(R15), R9
	MOVQ sealEmit_valOffs(R15), R10
	MOVQ sealEmit_nk(R15), R11
	MOVQ sealEmit_nv(R15), R12
	CMPQ SI, DI
	JAE done

loop:
	TESTQ $7, R8
	JNE fetched
	PREFETCHT0 1024(AX)(R11*8)
	PREFETCHT0 512(R9)(R11*4)
	PREFETCHT0 1024(BX)(R12*8)
	PREFETCHT0 512(R10)(R12*4)
	PREFETCHT0 1024(CX)(R8*8)
	PREFETCHT0 1024(DX)(R8*8)

fetched:
	MOVQ 0(SI), R13
	MOVQ 8(SI), R14
	XORL R15, R15
	CMPQ R13, -32(SI)
	SETNE R15B
	MOVQ R13, (AX)(R11*8)
	MOVL R12, (R9)(R11*4)
	MOVQ R14, (BX)(R12*8)
	MOVL R8, (R10)(R12*4)
	ADDQ R15, R11
	XORL R13, R13
	CMPQ R14, -24(SI)
	SETNE R13B
	ORQ R15, R13
	ADDQ R13, R12
	MOVQ 16(SI), R13
	MOVQ R13, (CX)(R8*8)
	MOVQ 24(SI), R14
	MOVQ R14, (DX)(R8*8)
	INCQ R8
	ADDQ $32, SI
	CMPQ SI, DI
	JB loop

done:
	MOVQ f+0(FP), R15
	MOVQ R11, sealEmit_nk(R15)
	MOVQ R12, sealEmit_nv(R15)
	RET
