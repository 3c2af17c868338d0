package model

import (
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// redactedSecret replaces the credentials of a URL, as net/url's Redacted does.
const redactedSecret = "xxxxx"

// RedactURL returns rawURL with any credentials replaced: http://user:pass@host becomes
// http://user:xxxxx@host, and a lone user name (often a token: https://TOKEN@host) becomes
// xxxxx. A server URL from OPENAI_BASE_URL or OLLAMA_HOST is shown in errors, the
// transcript, result.json and every report; its password must not be. Anything that does
// not parse as a URL goes through RedactText.
func RedactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return RedactText(rawURL)
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), redactedSecret)
	} else {
		u.User = url.User(redactedSecret)
	}
	return u.String()
}

// userinfo matches the credentials of a URL inside free text: scheme://USER[:PASSWORD]@.
var userinfo = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)([^\s/?#@"'<>:]*)(:[^\s/?#@"'<>]*)?@`)
})

// RedactText redacts the credentials of every URL in s (an error message that quotes a
// request URL) as RedactURL does.
func RedactText(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	return userinfo().ReplaceAllStringFunc(s, func(m string) string {
		g := userinfo().FindStringSubmatch(m)
		if g[3] != "" {
			return g[1] + g[2] + ":" + redactedSecret + "@"
		}
		return g[1] + redactedSecret + "@"
	})
}
