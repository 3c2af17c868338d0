package web

import (
	"net/netip"
	"testing"

	"gotest.tools/v3/assert"
)

func TestCheckAddr(t *testing.T) {
	for _, tc := range []struct {
		addr                  string
		blocked, blockPrivate bool // blocked by default; blocked with BlockPrivate
	}{
		{"169.254.169.254", true, true},
		{"169.254.0.1", true, true},
		{"fe80::1", true, true},
		{"fe80::1%eth0", true, true},
		{"fd00:ec2::254", true, true},
		{"100.100.100.200", true, true},
		{"::ffff:169.254.169.254", true, true},
		{"64:ff9b::a9fe:a9fe", true, true},
		{"127.0.0.1", false, true},
		{"::1", false, true},
		{"0.0.0.0", false, true},
		{"10.1.2.3", false, true},
		{"172.20.0.1", false, true},
		{"192.168.1.1", false, true},
		{"100.64.0.1", false, true},
		{"fd12::1", false, true},
		{"93.184.215.14", false, false},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", false, false},
	} {
		a := netip.MustParseAddr(tc.addr)
		assert.Equal(t, (&guard{}).checkAddr(a) != nil, tc.blocked, tc.addr)
		assert.Equal(t, (&guard{blockPrivate: true}).checkAddr(a) != nil, tc.blockPrivate, tc.addr+" (BlockPrivate)")
	}
}

func TestControlRejectsBeforeConnecting(t *testing.T) {
	g := &guard{}
	assert.ErrorContains(t, g.control("tcp4", "169.254.169.254:80", nil), "cloud metadata address")
	assert.ErrorContains(t, g.control("tcp6", "[fe80::1%lo]:80", nil), "link-local")
	assert.NilError(t, g.control("tcp4", "127.0.0.1:80", nil))
	assert.ErrorContains(t, g.control("tcp", "no-port", nil), "dial no-port")
}

func TestSizeText(t *testing.T) {
	for n, want := range map[int64]string{1 << 20: "1 MB", 2048: "2 KB", 300: "300 bytes", 1500: "1500 bytes", 0: "0 bytes"} {
		assert.Equal(t, sizeText(n), want)
	}
}
