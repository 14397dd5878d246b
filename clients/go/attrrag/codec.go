package attrrag

import (
	"fmt"

	"google.golang.org/protobuf/proto"
)

// protoCodec marshals with google.golang.org/protobuf. grpc's own codec goes through github.com/golang/protobuf,
// which in its 1.3 releases (Debian's golang-github-golang-protobuf-1-3-dev, installed beside grpc 1.33) cannot
// decode the messages protoc-gen-go generates today and panics; forcing this codec works with either version.
type protoCodec struct{}

func (protoCodec) Name() string { return "proto" }

func (protoCodec) Marshal(v interface{}) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("attrrag: cannot marshal %T: not a protobuf message", v)
	}
	return proto.Marshal(m)
}

func (protoCodec) Unmarshal(data []byte, v interface{}) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("attrrag: cannot unmarshal into %T: not a protobuf message", v)
	}
	return proto.Unmarshal(data, m)
}
