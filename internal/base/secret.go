package base

import "strings"

// SecretName reports whether a URL parameter's name looks like it holds a
// credential: the one rule behind tablekit's refusal of credentials in
// URLs and the CLI's redaction of them.
func SecretName(name string) bool {
	n := strings.ToLower(strings.NewReplacer("_", "", "-", "", ".", "").Replace(name))
	for _, w := range []string{"secret", "password", "passwd", "pwd", "token", "credential", "accesskey", "apikey", "privatekey", "auth", "signature"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
