#include "go_asm.h"
#include "textflag.h"

// func selectFast(f *kwFast)
//
// selectBlock's loop for the common update, in registers (kselect.go):
// copy the winner's staged head to the block, advance its position, read
// the key after its new head, replay its path with its new head's key, and
// count its wins in a row. It returns to Go, with the state written back,
// at the block's end, before an update that needs a refill or the slow
// next key (its head within two of its stage's end), and once an input
// has won kwayGallop in a row. An exhausted winner is among the first: its
// sentinel sits alone in its stage.
//
// Registers: R15 the state (the block's end in kwFast.bend); DI the
// block's next record; SI the stage; R9 the positions; R11 the next keys;
// R12 the nodes; AX and BX the climbing key and input
// (the winner's between replays); CX the node's index, R10 its address,
// DX and R8 its key and input; R13 a swap. The replay's chain from one
// match to the next is a compare and a conditional move: the next node's
// address comes from its index, one shift a level, off that chain.
TEXT ·selectFast(SB), NOSPLIT, $0-8
	MOVQ f+0(FP), R15
	MOVQ kwFast_o(R15), DI
	SHLQ $5, DI
	ADDQ kwFast_blk(R15), DI
	MOVQ kwFast_stg(R15), SI
	MOVQ kwFast_pos(R15), R9
	MOVQ kwFast_nx(R15), R11
	MOVQ kwFast_nd(R15), R12
	MOVQ kwFast_wk(R15), AX
	MOVQ kwFast_wi(R15), BX

loop:
	CMPQ DI, kwFast_bend(R15)
	JAE out
	CMPQ kwFast_run(R15), $4 // kwayGallop
	JGE out
	MOVLQSX (R9)(BX*4), CX // h
	MOVQ kwFast_end(R15), DX
	MOVLQSX (DX)(BX*4), DX // e
	LEAQ 2(CX), R8
	CMPQ R8, DX
	JGE out

	// The head to the block; the position past it; the key after the
	// new head to nx, whose old value is the new head's key.
	MOVQ CX, DX
	SHLQ $5, DX
	ADDQ SI, DX
	MOVUPS 0(DX), X0
	MOVUPS 16(DX), X1
	MOVUPS X0, 0(DI)
	MOVUPS X1, 16(DI)
	ADDQ $32, DI
	INCL CX
	MOVL CX, (R9)(BX*4)
	MOVQ (R11)(BX*8), AX
	MOVQ 64(DX), R8
	MOVQ R8, (R11)(BX*8)
	MOVQ BX, kwFast_wi(R15) // the winner, for its run

	// Replay from node (p+w)/2 to the root.
	MOVQ kwFast_p(R15), CX
	ADDQ BX, CX
	SHRQ $1, CX
	JEQ replayed

level:
	MOVQ CX, R10
	SHLQ $4, R10
	ADDQ R12, R10
	MOVQ 0(R10), DX
	MOVL 8(R10), R8
	CMPQ DX, AX
	JEQ tie
	// The lesser key climbs, the greater stays.
	MOVQ AX, R13
	CMOVQLT DX, AX
	CMOVQLT R13, DX
	MOVQ DX, 0(R10)
	MOVL BX, R13
	CMOVLLT R8, BX
	CMOVLLT R13, R8
	MOVL R8, 8(R10)

up:
	SHRQ $1, CX
	JNE level

replayed:
	CMPQ BX, kwFast_wi(R15)
	JNE reset
	INCQ kwFast_run(R15)
	JMP loop

reset:
	MOVQ $0, kwFast_run(R15)
	JMP loop

tie:
	// Equal keys: the node's input climbs if its head sorts first. An
	// exhausted input's head (diff 0) sorts last; then by val, then by
	// time. DX (the node's key, equal to AX) and R13 address the heads,
	// R14 holds a val or time.
	MOVLQSX (R9)(R8*4), DX
	SHLQ $5, DX
	ADDQ SI, DX
	MOVLQSX (R9)(BX*4), R13
	SHLQ $5, R13
	ADDQ SI, R13
	CMPQ 24(DX), $0
	JEQ up
	// The climbing input is never exhausted here, unlike in replay: it
	// starts with a staged head (not a sentinel, which sits alone in its
	// stage), and only a lesser key, or an equal one that sorts first,
	// takes its place.
	MOVQ 8(DX), R14
	CMPQ R14, 8(R13)
	JLT swap
	JGT keep
	MOVQ 16(DX), R14
	CMPQ R14, 16(R13)
	JCS swap

keep:
	JMP up

swap:
	MOVL BX, 8(R10)
	MOVL R8, BX
	JMP up

out:
	SUBQ kwFast_blk(R15), DI
	SHRQ $5, DI
	MOVQ DI, kwFast_o(R15)
	MOVQ AX, kwFast_wk(R15)
	MOVQ BX, kwFast_wi(R15)
	RET

// func emitFast(f *kwEmit)
//
// emit's loop (kmerge11.go) in registers: advance each record's time to the
// since, sum equal (key, val, time) into the accumulator, and write the
// accumulator's update when a different one arrives and it did not cancel,
// opening a key and a val when they differ from the last written ones. It
// returns to Go at the records' end, or before a record whose sum would
// overflow: the Go loop sums it, and the rest of its run, in 128 bits.
//
// Registers: R15 the state; SI the next record, DI the records' end; AX,
// BX, CX, DX the accumulator's key, val, time and diff; R9, R10, R11 the
// keys, vals and updates written; R8, R12, R13 the record's key, val and
// time; R14 a column's base (the six stay in the state).
TEXT ·emitFast(SB), NOSPLIT, $0-8
	MOVQ f+0(FP), R15
	MOVQ kwEmit_rs(R15), SI
	MOVQ kwEmit_n(R15), DI
	SHLQ $5, DI
	ADDQ SI, DI
	MOVQ kwEmit_i(R15), R8
	SHLQ $5, R8
	ADDQ R8, SI
	MOVQ kwEmit_ak(R15), AX
	MOVQ kwEmit_av(R15), BX
	MOVQ kwEmit_at(R15), CX
	MOVQ kwEmit_ad(R15), DX
	MOVQ kwEmit_nk(R15), R9
	MOVQ kwEmit_nv(R15), R10
	MOVQ kwEmit_nu(R15), R11

eloop:
	CMPQ SI, DI
	JAE eout
	MOVQ 0(SI), R8
	MOVQ 8(SI), R12
	MOVQ 16(SI), R13
	CMPQ R13, kwEmit_s(R15)
	CMOVQCS kwEmit_s(R15), R13
	CMPQ R8, AX
	JNE differ
	CMPQ R12, BX
	JNE differ
	CMPQ R13, CX
	JNE differ
	// The same (key, val, time): sum the diffs, unless that overflows.
	MOVQ DX, R14
	ADDQ 24(SI), R14
	JOS eout
	MOVQ R14, DX
	ADDQ $32, SI
	JMP eloop

differ:
	TESTQ DX, DX
	JEQ open
	// Write the accumulator's update: its key if the last written key
	// differs (or none is), its val if the key is new or the last val
	// differs, then its time and diff and the offsets that close them.
	MOVQ kwEmit_oK(R15), R14
	TESTQ R9, R9
	JEQ newkey
	CMPQ -8(R14)(R9*8), AX
	JNE newkey
	MOVQ kwEmit_oV(R15), R14
	CMPQ -8(R14)(R10*8), BX
	JEQ update
	JMP newval

newkey:
	MOVQ AX, (R14)(R9*8)
	INCQ R9
	MOVQ kwEmit_oV(R15), R14

newval:
	MOVQ BX, (R14)(R10*8)
	INCQ R10

update:
	MOVQ kwEmit_oT(R15), R14
	MOVQ CX, (R14)(R11*8)
	MOVQ kwEmit_oD(R15), R14
	MOVQ DX, (R14)(R11*8)
	INCQ R11
	MOVQ kwEmit_oVo(R15), R14
	MOVL R11, (R14)(R10*4)
	MOVQ kwEmit_oKo(R15), R14
	MOVL R10, (R14)(R9*4)

open:
	// The record opens the accumulator.
	MOVQ R8, AX
	MOVQ R12, BX
	MOVQ R13, CX
	MOVQ 24(SI), DX
	ADDQ $32, SI
	JMP eloop

eout:
	SUBQ kwEmit_rs(R15), SI
	SHRQ $5, SI
	MOVQ SI, kwEmit_i(R15)
	MOVQ AX, kwEmit_ak(R15)
	MOVQ BX, kwEmit_av(R15)
	MOVQ CX, kwEmit_at(R15)
	MOVQ DX, kwEmit_ad(R15)
	MOVQ R9, kwEmit_nk(R15)
	MOVQ R10, kwEmit_nv(R15)
	MOVQ R11, kwEmit_nu(R15)
	RET
