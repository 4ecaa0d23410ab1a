package store

import (
	"net/url"
	"regexp"
	"strings"
)

// secretParams are the query parameters and key=value fields of a
// connection string that hold a secret.
var secretParams = []string{"password", "sslpassword", "passwd", "pass", "api_key", "apikey", "key", "token", "secret"}

// secretField finds a secret in a key=value connection string
// ("host=h password=p", quoted values included).
var secretField = regexp.MustCompile(`(?i)\b(password|sslpassword|passwd|api_key|apikey|token|secret)(\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&;]+)`)

// Redact returns an index location or connection string fit for messages
// and logs: the password of user:password@, secret query parameters
// (?password=, ?sslpassword=, ...) and secret key=value fields are
// replaced by "***". Everything else is kept, so the user can still tell
// which server it names.
func Redact(location string) string {
	if i := strings.Index(location, "://"); i > 0 && !strings.ContainsAny(location[:i], " =") {
		u, err := url.Parse(location)
		if err != nil {
			return secretField.ReplaceAllString(location[:i+3]+"(an unparsable address)", "$1$2***")
		}
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "***")
		} else if u.User != nil && strings.EqualFold(u.Scheme, "qdrant") {
			u.User = url.User("***") // a Qdrant location has no user: it can only be a key
		}
		if u.RawQuery != "" {
			q := u.Query()
			for name := range q {
				for _, s := range secretParams {
					if strings.EqualFold(name, s) {
						q[name] = []string{"***"}
					}
				}
			}
			u.RawQuery = q.Encode()
		}
		return strings.ReplaceAll(strings.ReplaceAll(u.String(), "%2A%2A%2A", "***"), "%2A", "*")
	}
	return secretField.ReplaceAllString(location, "$1$2***")
}
