package attrrag

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"time"

	pb "github.com/attr-rag/attr-rag/clients/go/gen/attr_rag/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// Options says how to reach the gateway. The zero value is plaintext without a token.
type Options struct {
	// Token is sent as "authorization: Bearer <token>" (the gateway's authToken); empty sends none.
	Token string
	// TLS connects with TLS, trusting the system's CAs unless CAFile names others.
	TLS bool
	// CAFile is a PEM file of the CA certificates to trust; setting it implies TLS.
	CAFile string
	// DialOptions are passed on to grpc.Dial after this package's own (e.g. grpc.WithBlock()).
	DialOptions []grpc.DialOption
	// Retry says how calls refused with codes.Unavailable or codes.ResourceExhausted are tried again; the zero
	// value is DefaultRetryPolicy, MaxAttempts 1 turns retries off. Streams are only retried until their first
	// message has reached the caller.
	Retry RetryPolicy
	// OnRetry, unless nil, is called before each wait to retry: method is the RPC ("Ask", "CreateBatch", ...),
	// attempt the one that failed (1 for the first try), err its *Error.
	OnRetry func(method string, attempt int, err error, wait time.Duration)
}

// Client is a connection to one gateway. It is safe for concurrent use; Close it when done.
type Client struct {
	conn    *grpc.ClientConn
	ask     pb.AttrRagServiceClient
	batches pb.BatchServiceClient
	retry   retrier
}

// Dial connects to address ("host:port"). Like grpc.Dial it does not wait for the connection: an unreachable
// gateway shows as codes.Unavailable on the first call.
func Dial(address string, opts Options) (*Client, error) {
	dial := []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.ForceCodec(protoCodec{}))}
	useTLS := opts.TLS || opts.CAFile != ""
	if useTLS {
		config := &tls.Config{MinVersion: tls.VersionTLS12}
		if opts.CAFile != "" {
			pem, err := os.ReadFile(opts.CAFile)
			if err != nil {
				return nil, fmt.Errorf("attrrag: reading the CA file: %w", err)
			}
			config.RootCAs = x509.NewCertPool()
			if !config.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("attrrag: %s holds no PEM certificate; pass the CA that signed the gateway's certificate", opts.CAFile)
			}
		}
		dial = append(dial, grpc.WithTransportCredentials(credentials.NewTLS(config)))
	} else {
		dial = append(dial, grpc.WithInsecure())
	}
	if opts.Token != "" {
		dial = append(dial, grpc.WithPerRPCCredentials(bearerToken{token: opts.Token, tls: useTLS}))
	}
	conn, err := grpc.Dial(address, append(dial, opts.DialOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("attrrag: dialing %s: %w", address, err)
	}
	retry := retrier{policy: opts.Retry.withDefaults(), onRetry: opts.OnRetry}
	return &Client{conn: conn, ask: pb.NewAttrRagServiceClient(conn), batches: pb.NewBatchServiceClient(conn), retry: retry}, nil
}

// Close ends the connection; calls still running fail with codes.Canceled.
func (c *Client) Close() error { return c.conn.Close() }
