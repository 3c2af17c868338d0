package scrub

import (
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// process is the set every output of the process scrubs with: secrets are the process's
// (its environment, the tasks it loaded), so are its outputs.
var process Set

// Add registers values as secret for the whole process (see Set.Add).
func Add(values ...string) { process.Add(values...) }

// String returns s with every secret of the process replaced.
func String(s string) string { return process.String(s) }

// Bytes returns b with every secret of the process replaced (b itself when none is in it).
func Bytes(b []byte) []byte { return process.Bytes(b) }

// Known reports how many secret values the process knows.
func Known() int { return process.Len() }

// providerVariables are the variables the model providers read, as their rows in
// runner/model/providers declare them (AddProviderVariables): the API keys, whose values
// are secret, and the server addresses, whose user info is.
var providerVariables struct {
	sync.Mutex
	names []string
}

// AddProviderVariables adds names to the variables AddProviderEnv reads. The providers'
// registry calls it for each of its rows, so that a provider's variables are declared
// once, in its row.
func AddProviderVariables(names ...string) {
	providerVariables.Lock()
	defer providerVariables.Unlock()
	for _, n := range names {
		if !slices.Contains(providerVariables.names, n) {
			providerVariables.names = append(providerVariables.names, n)
		}
	}
}

// ProviderVariables lists the variables of AddProviderVariables.
func ProviderVariables() []string {
	providerVariables.Lock()
	defer providerVariables.Unlock()
	return slices.Clone(providerVariables.names)
}

// secretName matches the names of variables that hold credentials, as the command
// environment filter (tools/exec.IsSecretName) and the cassettes read them.
var secretName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH`)
})

// AddEnviron registers the credentials in an environment (NAME=VALUE pairs, as
// os.Environ returns them): the values of variables whose names look like credentials,
// and the user info of every URL. runner never gives them to the agent, but a server may
// echo one, and a CI job's GITHUB_TOKEN has no business in a report either.
func AddEnviron(environ []string) {
	var values []string
	for _, kv := range environ {
		name, v, _ := strings.Cut(kv, "=")
		if secretName().MatchString(name) {
			values = append(values, strings.TrimSpace(v))
		}
		values = append(values, URLSecrets(v)...)
	}
	Add(values...)
}

// AddProviderEnv registers getenv's values of the provider variables (ProviderVariables()):
// the API keys and the user info of the server addresses. providers.Open calls it with the
// environment it reads, which tests and callers may inject.
func AddProviderEnv(getenv func(string) string) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var values []string
	for _, name := range ProviderVariables() {
		v := strings.TrimSpace(getenv(name))
		if strings.HasSuffix(name, "_KEY") {
			values = append(values, v)
		}
		values = append(values, URLSecrets(v)...)
	}
	Add(values...)
}

// URLSecrets returns the secrets in a server address's user info: the password, or a
// lone user name (https://TOKEN@host: a token more often than a name), decoded and as
// written. A host without a scheme (OLLAMA_HOST=TOKEN@host:11434) counts too.
func URLSecrets(raw string) []string {
	raw = strings.TrimSpace(raw)
	if !strings.Contains(raw, "@") {
		return nil
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return nil
	}
	written := raw[strings.Index(raw, "://")+3:]
	written = written[:strings.LastIndex(written, "@")]
	if p, ok := u.User.Password(); ok {
		_, wp, _ := strings.Cut(written, ":")
		return []string{p, wp}
	}
	return []string{u.User.Username(), written}
}
