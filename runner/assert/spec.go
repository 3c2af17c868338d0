package assert

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// specAs returns spec as a T, accepting T or a non-nil *T: the task decoder stores
// values, but Go users building tasks by hand may pass pointers.
func specAs[T any](spec any) (T, error) {
	switch v := spec.(type) {
	case T:
		return v, nil
	case *T:
		if v != nil {
			return *v, nil
		}
	}
	var zero T
	return zero, fmt.Errorf("spec has type %T, want %T", spec, zero)
}

// specInt accepts any integral number: YAML and JSON decoders into `any` produce int64,
// uint64 or float64.
func specInt(spec any) (int, error) {
	switch v := spec.(type) {
	case int:
		return v, nil
	case int64:
		return int(v), nil
	case uint64:
		if v <= math.MaxInt32 {
			return int(v), nil
		}
	case float64:
		if v == math.Trunc(v) && math.Abs(v) <= math.MaxInt32 {
			return int(v), nil
		}
	case *int:
		if v != nil {
			return *v, nil
		}
	}
	return 0, fmt.Errorf("spec %v (%T) is not an integer", spec, spec)
}

func nonEmpty(field, v string) error {
	if v == "" {
		return fmt.Errorf("%s is empty", field)
	}
	return nil
}

// maxQuoted bounds how much of a value a message repeats.
const maxQuoted = 120

// quote renders s for a message: Go-quoted, cut to maxQuoted runes.
func quote(s string) string {
	if utf8.RuneCountInString(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	r := []rune(s)
	return strconv.Quote(string(r[:maxQuoted])) + "…"
}

// plural returns "1 call", "2 calls".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
