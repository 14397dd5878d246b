package attrrag

import "context"

// bearerToken sends "authorization: Bearer <token>" with every call.
type bearerToken struct {
	token string
	tls   bool
}

func (b bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

// RequireTransportSecurity is false without TLS so a gateway on loopback or inside a trusted network can be
// reached in plaintext; over any other network use TLS, or the token travels in the clear.
func (b bearerToken) RequireTransportSecurity() bool { return b.tls }
