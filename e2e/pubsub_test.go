package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestPubSub subscribes with go-redis to channels and patterns, on the
// event loop and with a goroutine per connection, and checks delivery
// (message and pmessage, once per subscription), PUBLISH's receiver
// counts, PUBSUB CHANNELS/NUMSUB/NUMPAT, the subscribed state's refusal of
// other commands, INFO's counters and the clean-up when a subscriber
// leaves.
func TestPubSub(t *testing.T) {
	for _, io := range []string{"loop", "goroutine"} {
		t.Run(io, func(t *testing.T) {
			s := startServer(t, t.TempDir(), "--io", io)
			pub := s.client()
			sub := pub.Subscribe(ctx, "news", "sport")
			defer sub.Close()
			if _, err := sub.Receive(ctx); err != nil { // the first confirmation
				t.Fatal(err)
			}
			if _, err := sub.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			if err := sub.PSubscribe(ctx, "n*", "s?ort"); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 2; i++ {
				if _, err := sub.Receive(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := pub.Publish(ctx, "news", "hello").Result(); err != nil || n != 2 {
				t.Fatalf("PUBLISH news = %d, %v; want 2 (channel and pattern)", n, err)
			}
			got := map[string]bool{}
			for i := 0; i < 2; i++ {
				m, err := sub.ReceiveTimeout(ctx, 10*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				msg, ok := m.(*redis.Message)
				if !ok || msg.Channel != "news" || msg.Payload != "hello" {
					t.Fatalf("received %#v", m)
				}
				got[msg.Pattern] = true
			}
			if !got[""] || !got["n*"] {
				t.Fatalf("deliveries %v, want one plain and one for pattern n*", got)
			}
			if n, _ := pub.Publish(ctx, "nobody", "x").Result(); n != 1 { // n* matches
				t.Fatalf("PUBLISH nobody = %d, want 1", n)
			}
			if m, err := sub.ReceiveTimeout(ctx, 10*time.Second); err != nil || m.(*redis.Message).Pattern != "n*" {
				t.Fatalf("pattern delivery: %#v %v", m, err)
			}
			if n, _ := pub.Publish(ctx, "weather", "x").Result(); n != 0 {
				t.Fatalf("PUBLISH weather = %d, want 0", n)
			}
			if ch, err := pub.PubSubChannels(ctx, "*").Result(); err != nil || strings.Join(ch, ",") != "news,sport" {
				t.Fatalf("PUBSUB CHANNELS = %v, %v", ch, err)
			}
			if m, err := pub.PubSubNumSub(ctx, "news", "weather").Result(); err != nil || m["news"] != 1 || m["weather"] != 0 {
				t.Fatalf("PUBSUB NUMSUB = %v, %v", m, err)
			}
			if n, err := pub.PubSubNumPat(ctx).Result(); err != nil || n != 2 {
				t.Fatalf("PUBSUB NUMPAT = %d, %v", n, err)
			}
			info, _ := pub.Info(ctx, "stats").Result()
			if !strings.Contains(info, "pubsub_channels:2\r\n") || !strings.Contains(info, "pubsub_patterns:2\r\n") {
				t.Fatalf("INFO stats pubsub counters: %q", info)
			}

			// A raw connection in the subscribed state.
			raw, err := dialRESP(s.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.close()
			for _, step := range []struct {
				cmd  []any
				want string
			}{
				{[]any{"SUBSCRIBE", "a"}, `*3["subscribe", "a", :1]`},
				{[]any{"GET", "k"}, "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"},
				{[]any{"PING"}, `*2["pong", ""]`},
				{[]any{"PING", "hi"}, `*2["pong", "hi"]`},
				{[]any{"UNSUBSCRIBE", "a"}, `*3["unsubscribe", "a", :0]`},
				{[]any{"UNSUBSCRIBE"}, `*3["unsubscribe", $-1, :0]`},
				{[]any{"GET", "k"}, "$-1"},
				{[]any{"PSUBSCRIBE", "x*"}, `*3["psubscribe", "x*", :1]`},
				{[]any{"RESET"}, "+RESET"},
				{[]any{"PING"}, "+PONG"},
			} {
				r, err := raw.do(step.cmd...)
				if err != nil || r.String() != step.want {
					t.Fatalf("%v: %s (%v), want %s", step.cmd, r, err, step.want)
				}
			}

			sub.Close() // the subscriber leaves: its subscriptions go
			for i := 0; ; i++ {
				n, err := pub.PubSubNumPat(ctx).Result()
				if err == nil && n == 0 {
					break
				}
				if i == 10000 {
					t.Fatalf("patterns still subscribed after the subscriber closed: %d, %v", n, err)
				}
			}
			if n, _ := pub.Publish(ctx, "news", "x").Result(); n != 0 {
				t.Fatalf("PUBLISH after the subscriber left = %d", n)
			}
		})
	}
}
