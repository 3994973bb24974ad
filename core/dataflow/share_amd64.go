package dataflow

import "golang.org/x/sys/cpu"

// shareAVX says the CPU runs share_amd64.s (AVX-512 F, VL and DQ, BMI2's
// PDEP, POPCNT): a share of two-column rows among a power-of-two number
// of workers hashes four rows at a time and compresses the kept updates
// into place (Chunk.shareFast). A variable, so tests can run the Go path
// beside it.
var shareAVX = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512DQ && cpu.X86.HasBMI2 && cpu.X86.HasPOPCNT

// shareMasks2 writes, for each of groups groups of four two-column rows
// at rows, a byte whose bit i says row i's first column hashes (hashFirst)
// to a worker whose bits, from shift up, equal want; it returns how many
// bits it set (share_amd64.s).
//
//go:noescape
func shareMasks2(rows *int64, groups int, masks *byte, shift, want uint64) int

// compress2 appends to dst, in order, the updates of groups groups of four
// two-column updates at src whose bit is set in the group's byte of masks.
// It stores each column's four values whole: each of dst's columns needs
// room for four words past what is kept (share_amd64.s).
//
//go:noescape
func compress2(src *shareCols, groups int, masks *byte, dst *shareCols)
