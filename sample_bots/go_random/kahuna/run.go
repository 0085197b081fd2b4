package kahuna

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "kahuna.arena/proto/kahuna/v1"
)

// ChooseFunc picks one of the legal actions (sorted by text notation, never
// empty) for the observation. It must return before obs.Clock.Deadline().
type ChooseFunc func(obs *Observation, legal []Action) Action

// Run plays one match: it reads KAHUNA_REFEREE (a gRPC target such as
// unix:///run/kahuna/referee.sock) and KAHUNA_TOKEN, and returns the exit
// status: 0 once MatchOver arrived, 1 if the bot was cut off or the stream
// failed, 2 if the environment is missing.
func Run(name string, choose ChooseFunc) int {
	target, token := os.Getenv("KAHUNA_REFEREE"), os.Getenv("KAHUNA_TOKEN")
	if target == "" {
		fmt.Fprintln(os.Stderr, name+": KAHUNA_REFEREE is not set (expected unix:///path/to/socket or host:port)")
		return 2
	}
	if token == "" {
		fmt.Fprintln(os.Stderr, name+": KAHUNA_TOKEN is not set (the arena gives each bot its token)")
		return 2
	}
	if err := play(target, token, name, choose); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}

func play(target, token, name string, choose ChooseFunc) error {
	// Fixed flow-control windows turn grpc-go's bandwidth estimator off: it would
	// send a PING (and a WINDOW_UPDATE) with every request it receives, which the
	// referee must answer on the decision's clock. One stream carries small
	// messages; 1 MiB is room for the largest (a GameOver's record).
	conn, err := grpc.NewClient(target,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(1<<20), grpc.WithInitialConnWindowSize(1<<20),
		grpc.WithDisableRetry()) // one stream, never replayed
	if err != nil {
		return fmt.Errorf("cannot dial %s: %w", target, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := pb.NewRefereeServiceClient(conn).Play(ctx) // one stream for the whole match
	if err != nil {
		return fmt.Errorf("cannot open the Play stream: %w", err)
	}
	hello := &pb.Hello{Token: token, BotName: name, BotVersion: "1", ProtocolVersion: 1}
	if err := stream.Send(&pb.PlayRequest{Kind: &pb.PlayRequest_Hello{Hello: hello}}); err != nil {
		return fmt.Errorf("cannot send Hello: %w", err)
	}
	var history []Event // this game's full history
	matchOver := false
	for {
		message, err := stream.Recv()
		if errors.Is(err, io.EOF) || (err != nil && matchOver) {
			if matchOver {
				return nil
			}
			return errors.New("the referee closed the stream before MatchOver")
		}
		if err != nil {
			return fmt.Errorf("the stream failed: %w", err)
		}
		switch kind := message.GetKind().(type) {
		case *pb.PlayResponse_GameStart:
			history = nil
		case *pb.PlayResponse_ActionRequest:
			received := time.Now()
			request := kind.ActionRequest
			o := request.GetObservation()
			if int(o.GetHistoryStart()) != len(history) {
				return fmt.Errorf("history starts at %d but %d events are known", o.GetHistoryStart(), len(history))
			}
			for _, e := range o.GetHistory() {
				history = append(history, event(e))
			}
			if len(request.GetLegalActions()) == 0 { // choose is promised a choice
				return fmt.Errorf("protocol error: request %d has no legal actions", request.GetRequestId())
			}
			legal := make([]Action, len(request.GetLegalActions()))
			for i, a := range request.GetLegalActions() {
				legal[i] = fromProto(a)
			}
			action := choose(observation(request, history, received), legal)
			reply := &pb.ActionReply{RequestId: request.GetRequestId(), Action: toProto(action)}
			if err := stream.Send(&pb.PlayRequest{Kind: &pb.PlayRequest_ActionReply{ActionReply: reply}}); err != nil {
				return fmt.Errorf("cannot reply to request %d: %w", request.GetRequestId(), err)
			}
		case *pb.PlayResponse_MatchOver:
			matchOver = true
			_ = stream.CloseSend() // the referee closes the stream; read until it does
		case *pb.PlayResponse_Goodbye:
			_ = stream.CloseSend()
			if matchOver { // the match is over: a later Goodbye does not undo it
				return nil
			}
			return fmt.Errorf("cut off by the referee: %s: %s", kind.Goodbye.GetStatus(), kind.Goodbye.GetReason())
		}
	}
}
