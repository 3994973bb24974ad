//go:build !amd64

package dataflow

// shareAVX: no assembly share on this architecture (share_amd64.s).
var shareAVX = false

func shareMasks2(rows *int64, groups int, masks *byte, shift, want uint64) int {
	panic("dataflow: no assembly share on this architecture")
}

func compress2(src *shareCols, groups int, masks *byte, dst *shareCols) {
	panic("dataflow: no assembly share on this architecture")
}
