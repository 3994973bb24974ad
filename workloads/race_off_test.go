//go:build !race

package workloads_test

// raceBuild reports a -race build: the random specs check fewer there.
const raceBuild = false
