package batch

import "unsafe"

// selectBlock's common update in assembly (kselect_amd64.s). In Go, the
// loop called replay, and since a call clobbers every register the loop
// reloaded about a dozen values from the stack after each one; replay
// itself spent about 23 instructions a match. The assembly loop keeps the
// loop's state and the replay in registers: with the replay inline, a
// tree's update costs about 85 instructions instead of about 150
// (callgrind, MergeTop k=16: 157.2M instructions in all before, 138.9M
// after). It takes only updates that need none of the loop's rarer paths
// (a refill, the next key from the columns, a gallop, an exhausted input)
// and returns to the Go loop before each such update, so the Go loop stays
// whole: it is the kernel on other architectures, and tests run every
// merge through both (kwParams.slow). emit's loop is in assembly too
// (emitFast), but for a sum that overflows, which the Go loop takes on
// in 128 bits with the rest of its run:
// 43 instructions a record instead of 55 (callgrind, MergeTop k=16: 138.9M
// in all before, 129.8M after), for a gain inside the host's noise on the
// merge benchmarks and about 3% on SpineSteady.

// kwFast is the state selectFast runs on: selectBlock's loop variables and
// the kernel's arrays by their first elements. selectFast reads it, runs,
// and writes back o, wk, wi and run.
type kwFast struct {
	blk  unsafe.Pointer // the block
	o    int            // its next record
	stg  unsafe.Pointer // the stage
	pos  unsafe.Pointer // int32 per input: its head in the stage
	end  unsafe.Pointer // int32 per input: its stage's end
	nx   unsafe.Pointer // int64 per input: the key after its head
	nd   unsafe.Pointer // the tree's nodes
	p    uint           // inputs
	wk   int64          // the winner's head key and input
	wi   int64
	run  int64   // updates in a row won by wi
	bend uintptr // where to stop: the block's lim'th record, as an address
}

// kwEmit is the state emitFast runs on: emit's loop variables and the
// output's columns by their first elements. emitFast reads it, runs, and
// writes back i, the accumulator and the counts.
type kwEmit struct {
	rs         unsafe.Pointer // the records
	i, n       int            // the next record; the records' end
	s          uint64         // the since's time: times advance to it
	ak, av     int64          // the accumulator
	at         uint64
	ad         int64
	nk, nv, nu int // keys, vals and updates written
	oK, oKo    unsafe.Pointer
	oV, oVo    unsafe.Pointer
	oT, oD     unsafe.Pointer
}
