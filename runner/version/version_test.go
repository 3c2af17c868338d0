package version

import (
	"runtime/debug"
	"testing"

	"gotest.tools/v3/assert"
)

func TestCompute(t *testing.T) {
	info := func(v string, settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Version: v}, Settings: settings}, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	assert.Equal(t, compute("v1.2.3", none), "v1.2.3")
	assert.Equal(t, compute("", none), "devel")
	assert.Equal(t, compute("", info("v0.4.0")), "v0.4.0")
	assert.Equal(t, compute("", info("(devel)")), "devel")
	assert.Equal(t, compute("", info("(devel)",
		debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123"},
		debug.BuildSetting{Key: "vcs.modified", Value: "true"})), "devel-0123456789ab-dirty")
	// What go build stamps in a git checkout since Go 1.24: a pseudo-version, not a release.
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "f9bf47390b69aa00bb11cc22dd33ee44ff556677"}, {Key: "vcs.modified", Value: "false"}}
	assert.Equal(t, compute("", info("v0.0.0-20261125230716-f9bf47390b69", vcs...)), "devel-f9bf47390b69")
	assert.Equal(t, compute("", info("v0.3.1-0.20261125230716-f9bf47390b69", vcs...)), "devel-f9bf47390b69")
	assert.Equal(t, compute("", info("v0.4.0-rc.1.0.20261125230716-f9bf47390b69", vcs...)), "devel-f9bf47390b69")
	dirty := []debug.BuildSetting{vcs[0], {Key: "vcs.modified", Value: "true"}}
	assert.Equal(t, compute("", info("v0.0.0-20261125230716-f9bf47390b69+dirty", dirty...)), "devel-f9bf47390b69-dirty")
	// A checkout at a tag is that release; a release's ldflags win over everything.
	assert.Equal(t, compute("", info("v0.4.0", vcs...)), "v0.4.0")
	assert.Equal(t, compute("", info("v0.4.0-rc.1", vcs...)), "v0.4.0-rc.1")
	assert.Equal(t, compute("v0.5.0", info("v0.0.0-20261125230716-f9bf47390b69", vcs...)), "v0.5.0")
	assert.Assert(t, String() != "")
}
