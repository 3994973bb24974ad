#include "go_asm.h"
#include "textflag.h"

// func selectFast(f *kwFast)
//
// selectBlock's loop for the common update, in registers (kselect.go):
// copy the winner's staged head to the block, advance its position, read
// the key after its new head, replay its path with its new head's key, and
// count its wins in a row. It returns to Go, with the state written back,
// at the block's end, before an update that needs a refill or the slow
// next key (its head within two of its stage's end), once an input has
// won kwayGallop in a row, and when the winner's key is math.MaxInt64 (an
// exhausted input's sentinel, or a real key at the top).
//
// Registers: R15 the state; DI the block's next record; R13 the block's
// end; SI the stage; R9 the positions; R11 the next keys; R12 the nodes;
// R14 math.MaxInt64; AX and BX the climbing key and input (the winner's
// between replays); CX the node, DX and R8 its key and input, R10 a swap.
TEXT ·selectFast(SB), NOSPLIT, $0-8
	MOVQ f+0(FP), R15
	MOVQ kwFast_o(R15), DI
	SHLQ $5, DI
	ADDQ kwFast_blk(R15), DI
	MOVQ kwFast_lim(R15), R13
	SHLQ $5, R13
	ADDQ kwFast_blk(R15), R13
	MOVQ kwFast_stg(R15), SI
	MOVQ kwFast_pos(R15), R9
	MOVQ kwFast_nx(R15), R11
	MOVQ kwFast_nd(R15), R12
	MOVQ kwFast_wk(R15), AX
	MOVQ kwFast_wi(R15), BX
	MOVQ $0x7fffffffffffffff, R14

loop:
	CMPQ DI, R13
	JAE out
	CMPQ AX, R14
	JEQ out
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

	// Replay from node (p+w)/2 to the root; CX walks the nodes by address.
	MOVQ kwFast_p(R15), CX
	ADDQ BX, CX
	SHRQ $1, CX
	JEQ replayed
	SHLQ $4, CX
	ADDQ R12, CX

level:
	MOVQ 0(CX), DX
	MOVL 8(CX), R8
	CMPQ DX, AX
	JEQ tie
	// The lesser key climbs, the greater stays.
	MOVQ AX, R10
	CMOVQLT DX, AX
	CMOVQLT R10, DX
	MOVQ DX, 0(CX)
	MOVL BX, R10
	CMOVLLT R8, BX
	CMOVLLT R10, R8
	MOVL R8, 8(CX)

up:
	SUBQ R12, CX
	SHRQ $1, CX
	ANDQ $-16, CX
	JEQ replayed
	ADDQ R12, CX
	JMP level

tie:
	// Equal keys: the node's input climbs if its head sorts first. An
	// exhausted input's head (diff 0) sorts last; then by val, then by
	// time. DX (the node's key, equal to AX) and R10 address the heads;
	// R14 is borrowed for a val or time.
	MOVLQSX (R9)(R8*4), DX
	SHLQ $5, DX
	ADDQ SI, DX
	MOVLQSX (R9)(BX*4), R10
	SHLQ $5, R10
	ADDQ SI, R10
	CMPQ 24(DX), $0
	JEQ up
	// The climbing input is never exhausted here, unlike in replay: it
	// starts with a staged head (not a sentinel, which sits alone in its
	// stage), and only a lesser key, or an equal one that sorts first,
	// takes its place.
	MOVQ 8(DX), R14
	CMPQ R14, 8(R10)
	JLT swapMax
	JGT upMax
	MOVQ 16(DX), R14
	CMPQ R14, 16(R10)
	JCS swapMax

upMax:
	MOVQ $0x7fffffffffffffff, R14
	JMP up

swapMax:
	MOVQ $0x7fffffffffffffff, R14
	MOVL BX, 8(CX)
	MOVL R8, BX
	JMP up

replayed:
	CMPQ BX, kwFast_wi(R15)
	JNE reset
	INCQ kwFast_run(R15)
	JMP loop

reset:
	MOVQ $0, kwFast_run(R15)
	JMP loop

out:
	SUBQ kwFast_blk(R15), DI
	SHRQ $5, DI
	MOVQ DI, kwFast_o(R15)
	MOVQ AX, kwFast_wk(R15)
	MOVQ BX, kwFast_wi(R15)
	RET
