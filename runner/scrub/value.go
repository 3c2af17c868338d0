package scrub

import (
	"encoding/json"
	"reflect"
)

// Value scrubs, in place, every string reachable from ptr (a pointer to a record: struct
// fields, slices, maps, pointers and interfaces, json.RawMessage included). Records are
// scrubbed before they are rendered, so an output that cuts a text short (a console
// column, a capped message) never shows the first half of a secret.
func Value(ptr any) { process.Value(ptr) }

// Value scrubs, in place, every string reachable from ptr with s's secrets.
func (s *Set) Value(ptr any) {
	m := s.m.Load()
	if m == nil || ptr == nil {
		return
	}
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer {
		return
	}
	walk(m, v.Elem(), 0)
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

func walk(m *matcher, v reflect.Value, depth int) {
	if depth > 64 || !v.IsValid() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); v.CanSet() && m.containsString(s) {
			v.SetString(m.r.Replace(s))
		}
	case reflect.Slice:
		if v.Type() == rawMessage || v.Type().Elem().Kind() == reflect.Uint8 {
			if b := v.Bytes(); v.CanSet() && m.contains(b) {
				v.SetBytes([]byte(m.r.Replace(string(b))))
			}
			return
		}
		for i := 0; i < v.Len(); i++ {
			walk(m, v.Index(i), depth+1)
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			walk(m, v.Index(i), depth+1)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				walk(m, v.Field(i), depth+1)
			}
		}
	case reflect.Pointer:
		walk(m, v.Elem(), depth+1)
	case reflect.Interface:
		walkInterface(m, v, depth)
	case reflect.Map:
		walkMap(m, v, depth)
	}
}

// walkInterface scrubs what an interface holds. That is not addressable: it scrubs a
// copy and puts it back.
func walkInterface(m *matcher, v reflect.Value, depth int) {
	if v.IsNil() || !v.CanSet() {
		return
	}
	c := reflect.New(v.Elem().Type()).Elem()
	c.Set(v.Elem())
	walk(m, c, depth+1)
	v.Set(c)
}

// walkMap scrubs a map's keys and values. Neither is addressable: it scrubs copies and
// stores them back, under the scrubbed key when the key changed.
func walkMap(m *matcher, v reflect.Value, depth int) {
	if v.IsNil() {
		return
	}
	iter := v.MapRange()
	type kv struct{ oldKey, k, e reflect.Value }
	var changes []kv
	for iter.Next() {
		k := reflect.New(iter.Key().Type()).Elem()
		k.Set(iter.Key())
		e := reflect.New(iter.Value().Type()).Elem()
		e.Set(iter.Value())
		walk(m, k, depth+1)
		walk(m, e, depth+1)
		changes = append(changes, kv{iter.Key(), k, e})
	}
	for _, c := range changes {
		if !c.k.Equal(c.oldKey) {
			v.SetMapIndex(c.oldKey, reflect.Value{})
		}
		v.SetMapIndex(c.k, c.e)
	}
}
