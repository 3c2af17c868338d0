package sandbox

import (
	"errors"
	"testing"

	"gotest.tools/v3/assert"
)

func TestCheckModeKnowsEveryModeAndNamesThemForATypo(t *testing.T) {
	for _, m := range ModeNames() {
		assert.NilError(t, CheckMode(m))
	}
	assert.NilError(t, CheckMode(""), "empty means auto")
	err := CheckMode("bwarp")
	assert.Assert(t, errors.Is(err, ErrUnknownMode))
	assert.Error(t, err, `unknown sandbox mode "bwarp" (want auto, bwrap, landlock or none)`)
}

// TestProbeHandlesEveryMode fails when a row is added to Modes without a case in Probe.
func TestProbeHandlesEveryMode(t *testing.T) {
	if testing.Short() {
		t.Skip("probes the sandboxes")
	}
	for _, m := range ModeNames() {
		_, _, err := Probe(t.Context(), m)
		if err != nil {
			assert.Assert(t, !errors.Is(err, ErrUnknownMode), "%s: %v", m, err)
			assert.Assert(t, err.Error() != `sandbox mode "`+m+`" has no probe`)
		}
	}
}
