package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestMain lets the test binary play the doorman child, as the program does.
func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) == "doorman" {
		os.Exit(runDoorman())
	}
	goleak.VerifyTestMain(m)
}

// TestRoundTrip runs the README's first command and holds it to its word.
func TestRoundTrip(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatalf("round trip: %v\n%s", err, out.String())
	}
	for _, want := range []string{"delivered-steer", "delivered-start", "heartbeat stopped", "\nok "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
