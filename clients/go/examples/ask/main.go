// Asks the gateway one question and prints the answer as it streams, then its citations.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/attr-rag/attr-rag/clients/go/attrrag"
	pb "github.com/attr-rag/attr-rag/clients/go/gen/attr_rag/v1"
	"google.golang.org/protobuf/proto"
)

func main() {
	address := flag.String("address", "127.0.0.1:50051", "the gateway's gRPC host:port")
	token := flag.String("token", os.Getenv("ATTR_RAG_TOKEN"), "bearer token (default $ATTR_RAG_TOKEN)")
	ca := flag.String("ca", "", "PEM CA file: connect with TLS, trusting it")
	question := flag.String("question", "", "the question to ask")
	maxTokens := flag.Uint("max-tokens", 256, "longest answer, in tokens")
	flag.Parse()
	client, err := attrrag.Dial(*address, attrrag.Options{Token: *token, CAFile: *ca})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	req := &attrrag.AskRequest{Question: *question, Generation: &pb.GenerationOptions{MaxTokens: proto.Uint32(uint32(*maxTokens))}}
	answer, err := client.AskAnswer(context.Background(), req, func(ev *attrrag.AskEvent) {
		fmt.Print(ev.GetFinalAnswerDelta().GetText())
	})
	if err != nil {
		log.Fatal(err) // e.g. "attr-rag Ask failed: Unauthenticated: ..."
	}
	for _, c := range answer.Final.GetCitations() {
		fmt.Printf("\n[%d:%d] %v", c.GetStart(), c.GetEnd(), c.GetChunkIds())
	}
	fmt.Printf("\nrequest %s took %.0f ms\n", answer.RequestID, answer.Done.GetTimings().GetTotalMs())
}
