package task

import (
	"reflect"
	"strings"
)

// keysOf lists the task file keys of a struct type: the json names of its fields, in
// order, leaving out those not in the file (json:"-" or jsonschema:"-"). The loader's
// tables of known keys (and so "unknown field" and "did you mean") come from the same
// fields the schema is generated from.
func keysOf(v any) []string {
	t := reflect.TypeOf(v)
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || name == "" || f.Tag.Get("jsonschema") == "-" {
			continue
		}
		out = append(out, name)
	}
	return out
}
