package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Millis is a duration as every runner record writes it: a JSON number of milliseconds
// with up to three decimals (1234.567 is 1.234567 s), in a field named *_ms. One unit
// everywhere (result.json, transcripts, the --json report, bench.json) lets a reader add
// and compare any two fields without looking up which is which; the type, not each call
// site, does the conversion. Below a microsecond is noise for what runner times, and
// files stay readable.
type Millis time.Duration

// Duration is m as a time.Duration.
func (m Millis) Duration() time.Duration { return time.Duration(m) }

// Ms is m in milliseconds.
func (m Millis) Ms() float64 { return float64(m) / float64(time.Millisecond) }

// Seconds is m in seconds.
func (m Millis) Seconds() float64 { return time.Duration(m).Seconds() }

// String is the time.Duration form (1.2345s), for messages.
func (m Millis) String() string { return time.Duration(m).String() }

// MillisOf is a number of milliseconds as a Millis, rounded to the nanosecond.
func MillisOf(ms float64) Millis { return Millis(math.Round(ms * float64(time.Millisecond))) }

// MarshalJSON writes the milliseconds, to the microsecond.
func (m Millis) MarshalJSON() ([]byte, error) {
	us := time.Duration(m).Round(time.Microsecond).Microseconds()
	return strconv.AppendFloat(nil, float64(us)/1000, 'f', -1, 64), nil
}

// UnmarshalJSON reads a number of milliseconds (older transcripts wrote integers).
func (m *Millis) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsInf(f, 0) || math.Abs(f) > float64(math.MaxInt64)/float64(time.Millisecond) {
		return fmt.Errorf("milliseconds %.40s: not a number of milliseconds a duration can hold", b)
	}
	*m = MillisOf(f)
	return nil
}

// Legacy is a duration field of an older record format: its JSON key and the unit it was
// written in (time.Nanosecond for *_ns, time.Second for wall_seconds).
type Legacy struct {
	Key  string
	Unit time.Duration
	// To is the field the value goes to, when the record does not have the new key.
	To *Millis
	// New is the field's current key; a record holding it is not read for Key.
	New string
	// Read, when set, is set to true when the record held Key and not New: it is of the
	// older format.
	Read *bool
}

// ReadLegacy fills the fields of an older record format that b holds under their old
// keys, so output directories written before every duration became *_ms still merge,
// view and rerun. It decodes b only when one of the old keys appears in it.
func ReadLegacy(b []byte, fields ...Legacy) error {
	found := false
	for _, f := range fields {
		if bytes.Contains(b, []byte(`"`+f.Key+`"`)) {
			found = true
			break
		}
	}
	if !found {
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for _, f := range fields {
		v, ok := raw[f.Key]
		if !ok {
			continue
		}
		if _, ok := raw[f.New]; ok {
			continue
		}
		n, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return fmt.Errorf("%s: %s is not a number", f.Key, v)
		}
		*f.To = Millis(math.Round(n * float64(f.Unit)))
		if f.Read != nil {
			*f.Read = true
		}
	}
	return nil
}

// The records below read their durations' older keys too (see ReadLegacy).

// UnmarshalJSON reads a result.json, also one written before durations were *_ms.
func (s *Scenario) UnmarshalJSON(b []byte) error {
	type plain Scenario
	if err := json.Unmarshal(b, (*plain)(s)); err != nil {
		return err
	}
	older := false
	if err := ReadLegacy(b,
		Legacy{Key: "duration_ns", New: "duration_ms", Unit: time.Nanosecond, To: &s.Duration, Read: &older},
		Legacy{Key: "model_time_ns", New: "model_time_ms", Unit: time.Nanosecond, To: &s.ModelTime},
		Legacy{Key: "tool_time_ns", New: "tool_time_ms", Unit: time.Nanosecond, To: &s.ToolTime},
		Legacy{Key: "load_time_ns", New: "load_time_ms", Unit: time.Nanosecond, To: &s.LoadTime}); err != nil {
		return err
	}
	// The same change numbered repeats from 1 (they counted from 0): a result whose own
	// duration is still duration_ns is of that older format, so --rerun-failed and merge
	// over an older output directory key its runs as they are keyed now.
	if older {
		s.Repeat++
	}
	return nil
}

// UnmarshalJSON reads a call record, also one with duration_ns.
func (c *Call) UnmarshalJSON(b []byte) error {
	type plain Call
	if err := json.Unmarshal(b, (*plain)(c)); err != nil {
		return err
	}
	return ReadLegacy(b, Legacy{Key: "duration_ns", New: "duration_ms", Unit: time.Nanosecond, To: &c.Duration})
}

// UnmarshalJSON reads token totals, also ones with eval_time_ns.
func (u *Usage) UnmarshalJSON(b []byte) error {
	type plain Usage
	if err := json.Unmarshal(b, (*plain)(u)); err != nil {
		return err
	}
	return ReadLegacy(b, Legacy{Key: "eval_time_ns", New: "eval_time_ms", Unit: time.Nanosecond, To: &u.EvalTime})
}

// UnmarshalJSON reads a test's result, also one with duration_ns.
func (t *Test) UnmarshalJSON(b []byte) error {
	type plain Test
	if err := json.Unmarshal(b, (*plain)(t)); err != nil {
		return err
	}
	return ReadLegacy(b, Legacy{Key: "duration_ns", New: "duration_ms", Unit: time.Nanosecond, To: &t.Duration})
}

// UnmarshalJSON reads a run, also one with duration_ns.
func (r *Run) UnmarshalJSON(b []byte) error {
	type plain Run
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	return ReadLegacy(b, Legacy{Key: "duration_ns", New: "duration_ms", Unit: time.Nanosecond, To: &r.Duration})
}
