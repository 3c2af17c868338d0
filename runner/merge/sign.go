package merge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"os"
)

// KeyEnv names the variable holding the key every manifest line is signed with, and that
// merge, --resume and --rerun-failed then require: a secret of the CI (the same in the
// jobs that run shards and the job that merges them), never handed to a sandboxed command
// (their environment is built from nothing) and scrubbed from every output (its name holds
// KEY). Without it lines are unsigned and a manifest is trusted for where it lies alone.
//
// Why a secret the user gives rather than a key runner makes: a key written beside the
// output authenticates nothing against a forger, who writes a key of its own beside its
// forged manifest; and a key that stays on the machine is not there when another job
// merges. Only a secret both jobs hold, and the agent never sees, tells runner's
// manifests from the agent's.
const KeyEnv = "RUNNER_MANIFEST_KEY"

// manifestKey is the key lines are signed and checked with: derived from the secret, so the
// secret itself never meets a MAC, and named by an id, so a line signed with another key
// is told apart from a forged one.
type manifestKey struct {
	id     string
	secret []byte
}

// keyFrom derives the manifest key from the user's secret ("": none).
func keyFrom(secret string) *manifestKey {
	if secret == "" {
		return nil
	}
	k := macOf([]byte(secret), "runner results manifest v1")
	return &manifestKey{id: hex.EncodeToString(macOf(k, "key id"))[:16], secret: k}
}

// envKey is the key of this process's environment, read at each use (a handful per run).
func envKey() *manifestKey { return keyFrom(os.Getenv(KeyEnv)) }

// sign returns the MAC of one manifest line: the listed path and its content's SHA-256.
func (k *manifestKey) sign(path, sum string) string {
	return hex.EncodeToString(macOf(k.secret, path+"\x00"+sum))
}

// verifies reports whether mac is k's MAC of the line.
func (k *manifestKey) verifies(path, sum, mac string) bool {
	got, err := hex.DecodeString(mac)
	return err == nil && hmac.Equal(got, macOf(k.secret, path+"\x00"+sum))
}

func macOf(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}
