package reduce

// cmpRow compares two rows of equal length lexicographically.
func cmpRow(a, b []int64) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}
