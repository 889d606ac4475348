package inbox

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/inboxv1"
)

// The heartbeats and acks the doorman writes, and what an older or
// another doorman may have written: the fast path must read them all.
var (
	heartbeatSeeds = []string{
		`{"pid":4242,"session_id":"6add7575-18c3-4845-b635-53ea26619a4d","since":"2026-12-03T10:13:20.123Z","last_seen":"2026-12-03T10:13:53.151Z","delivered":3,"offset":133,"state":"following","inode":9978566,"owner_pid":4240,"peer_pid":4240,"socket":"/tmp/cc-socks/4240.sock","mode":"mcp","version":"0.2.0-dev","pending_bytes":0,"last_error":"receiver-did-not-queue: x","stopped_at":"","pacing":1,"confirmed":3,"unconfirmed":0}`,
		`{"pid":1,"session_id":"s","since":"a","last_seen":"b","delivered":0,"offset":0,"pending_bytes":0,"confirmed":0,"unconfirmed":0}`,
		`{"pid":1,"last_seen":"b","extra":{"nested":[1,2,{"x":null}]}}`,
		`{"pid":"1"}`, `{"offset":1.5}`, `{"PID":1}`, `{"pid":1,"pid":2}`, `null`, `[]`, `{"pid":1}x`, `{"state":"caf\u00e9"}`,
	}
	ackSeeds = []string{
		`{"ts":"2026-12-03T10:13:53.148Z","sha256":"d0d15f40a8a18f5a1234afad61c8e9a4fd1011ec2dc60538417f06179f7b5d9b","session_id":"6add7575-18c3-4845-b635-53ea26619a4d","peer_status":"busy","class":"delivered-steer","msg_id":"785a12f0-995e-4c8e-a7ce-9e8ad3e85a9a","line_offset":133,"inode":9978566,"from":"sx","peer_status_raw":"busy","doorman_pid":23139,"v":1,"queued_at":null,"priority":"next"}`,
		`{"ts":"t","sha256":"h","session_id":"s","peer_status":"idle","class":"refused","msg_id":"","reason":"undeliverable","gen":"g","paced_ms":1200,"confirm":"transcript","queued_at":"2026-12-03T10:13:53.150Z"}`,
		`{"ts":"t","sha256":"h"}`, `{"line_offset":null}`, `{"line_offset":-1}`, `{"inode":-1}`, `{"queued_at":3}`, `{"v":"1"}`, `{"Class":"x"}`,
	}
)

// TestDecodeSeeds: each seed decodes as json.Unmarshal decodes it, and
// the ones the doorman writes take the fast path.
func TestDecodeSeeds(t *testing.T) {
	for i, seed := range heartbeatSeeds {
		checkHeartbeat(t, []byte(seed))
		if i < 3 {
			if _, ok := scanHeartbeat([]byte(seed)); !ok {
				t.Errorf("heartbeat %s: not read by the fast path", seed)
			}
		}
	}
	for i, seed := range ackSeeds {
		checkAck(t, []byte(seed))
		if i < 3 {
			if _, ok := scanAck([]byte(seed)); !ok {
				t.Errorf("ack %s: not read by the fast path", seed)
			}
		}
	}
}

func checkHeartbeat(t *testing.T, b []byte) {
	t.Helper()
	sameAsUnmarshal(t, "heartbeat", b, decodeHeartbeat)
}

func checkAck(t *testing.T, b []byte) { t.Helper(); sameAsUnmarshal(t, "ack", b, decodeAck) }

// sameAsUnmarshal: decode gives json.Unmarshal's error (or none) and,
// without one, its value.
func sameAsUnmarshal[T any](t *testing.T, what string, b []byte, decode func([]byte) (T, error)) {
	t.Helper()
	got, err := decode(b)
	var want T
	werr := json.Unmarshal(b, &want)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%s %q: error %v, encoding/json's %v", what, b, err, werr)
	}
	if diff := cmp.Diff(want, got); err == nil && diff != "" {
		t.Fatalf("%s %q: (-encoding/json +decoder)\n%s", what, b, diff)
	}
}

// FuzzDecodeHeartbeat: decodeHeartbeat is json.Unmarshal's, value and
// error, on any text.
func FuzzDecodeHeartbeat(f *testing.F) {
	for _, s := range heartbeatSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) { checkHeartbeat(t, []byte(text)) })
}

// FuzzDecodeAck: decodeAck is json.Unmarshal's, value and error, on any
// text.
func FuzzDecodeAck(f *testing.F) {
	for _, s := range ackSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) { checkAck(t, []byte(text)) })
}

// jsonKeys is the JSON key of each field of struct type t, in order.
func jsonKeys(t reflect.Type) []string {
	var keys []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		keys = append(keys, name)
	}
	return keys
}

// fill sets every field of the struct v points to a value of its own
// (seeded by n), pointers allocated.
func fill(v reflect.Value, n int) {
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("v" + strconv.Itoa(n+i) + " \"é\" <&>")
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(-(n + i) * 1001))
		case reflect.Uint64:
			f.SetUint(uint64(n+i) << 40)
		case reflect.Pointer:
			p := reflect.New(f.Type().Elem())
			if p.Elem().Kind() == reflect.String {
				p.Elem().SetString("p" + strconv.Itoa(n+i))
			} else {
				p.Elem().SetInt(int64(n + i))
			}
			f.Set(p)
		default:
			panic("fill: a field of kind " + f.Kind().String())
		}
	}
}

// TestDecodeKnowsEveryField: the one-pass readers name every field of
// inboxv1.Heartbeat and inboxv1.Ack, in the types' order (a field added
// to a type and not to its reader would be dropped without a word), and
// read a value with every field set, as marshalled, to the same value.
func TestDecodeKnowsEveryField(t *testing.T) {
	if got, want := heartbeatKeys[:], jsonKeys(reflect.TypeFor[inboxv1.Heartbeat]()); !slices.Equal(got, want) {
		t.Errorf("heartbeatKeys = %q, want inboxv1.Heartbeat's %q", got, want)
	}
	if got, want := ackKeys[:], jsonKeys(reflect.TypeFor[inboxv1.Ack]()); !slices.Equal(got, want) {
		t.Errorf("ackKeys = %q, want inboxv1.Ack's %q", got, want)
	}
	var h inboxv1.Heartbeat
	fill(reflect.ValueOf(&h).Elem(), 1)
	b, _ := json.Marshal(h)
	if got, ok := scanHeartbeat(b); !ok || !cmp.Equal(got, h) {
		t.Errorf("heartbeat %s: read %v by the fast path, %+v; want %+v", b, ok, got, h)
	}
	var a inboxv1.Ack
	fill(reflect.ValueOf(&a).Elem(), 2)
	b, _ = json.Marshal(a)
	if got, ok := scanAck(b); !ok || !cmp.Equal(got, a) {
		t.Errorf("ack %s: read %v by the fast path, %+v; want %+v", b, ok, got, a)
	}
}

// TestEncodeAck: EncodeAck writes json.Marshal's bytes for an ack with
// every field set (strings that need escaping), one with none, and the
// doorman's usual acks (each omitempty field left out in turn).
func TestEncodeAck(t *testing.T) {
	acks := []inboxv1.Ack{{}}
	for n := range 4 {
		var a inboxv1.Ack
		fill(reflect.ValueOf(&a).Elem(), n)
		acks = append(acks, a)
	}
	for _, seed := range ackSeeds[:2] {
		a, err := decodeAck([]byte(seed))
		if err != nil {
			t.Fatal(err)
		}
		acks = append(acks, a)
	}
	for _, a := range acks {
		got, err := EncodeAck(a)
		want, werr := json.Marshal(a)
		if err != nil || werr != nil || string(got) != string(want) {
			t.Errorf("EncodeAck %s (%v)\njson.Marshal %s (%v)", got, err, want, werr)
		}
	}
}

// FuzzEncodeAck holds EncodeAck to json.Marshal for any strings.
func FuzzEncodeAck(f *testing.F) {
	f.Add("a", "<b>", int64(0))
	f.Add("\xff\u2028", "", int64(-3))
	f.Fuzz(func(t *testing.T, s, s2 string, n int64) {
		a := inboxv1.Ack{TS: s, SHA256: s2, MsgID: s, Gen: s2, From: s, Reason: s2, QueuedAt: &s, Priority: s2, PacedMS: n, Inode: uint64(n), LineOffset: &n, V: int(n)}
		got, err := EncodeAck(a)
		want, werr := json.Marshal(a)
		if err != nil || werr != nil || string(got) != string(want) {
			t.Fatalf("EncodeAck %s (%v)\njson.Marshal %s (%v)", got, err, want, werr)
		}
	})
}
