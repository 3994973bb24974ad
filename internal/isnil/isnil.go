// Package isnil tells a nil value behind an interface: an untyped nil, or a
// typed one — a nil pointer, map, slice, func, chan or unsafe pointer of a
// type that implements the interface, which is not == nil and whose first
// method call would panic with a nil dereference.
//
// It is one reflection, for arguments checked once a call (a storage given
// to trace.New, a reader given to share.NewBundle, an operator given to
// dataflow's OperatorBuilder.Build), never per update. Callers that know the
// likely types tell them with a type switch first and call Value for the
// rest.
package isnil

import "reflect"

// Value reports whether x is nil or holds a nil pointer, map, slice, func,
// chan or unsafe pointer. A value of any other kind (a struct, a number, a
// string, an array) is never nil.
func Value(x any) bool {
	v := reflect.ValueOf(x)
	switch v.Kind() {
	case reflect.Invalid: // x == nil
		return true
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return v.IsNil()
	}
	return false
}
