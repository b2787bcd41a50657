package actions

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncateMessage(t *testing.T) {
	for _, tc := range []struct {
		name    string
		message string
		cut     bool
	}{
		{"empty", "", false},
		{"short", "pods \"web-0\" is forbidden", false},
		{"at the bound", strings.Repeat("a", MaxConditionMessageLength), false},
		{"one above", strings.Repeat("a", MaxConditionMessageLength+1), true},
		{"far above", strings.Repeat("b", 10*MaxConditionMessageLength), true},
		{"multi-byte characters across the cut", strings.Repeat("é", MaxConditionMessageLength), true},
		{"four-byte characters across the cut", "x" + strings.Repeat("😀", MaxConditionMessageLength/2), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := TruncateMessage(tc.message)
			if len(got) > MaxConditionMessageLength {
				t.Fatalf("%d bytes, want at most %d", len(got), MaxConditionMessageLength)
			}
			if !utf8.ValidString(got) {
				t.Fatalf("the cut split a character")
			}
			if !tc.cut {
				if got != tc.message {
					t.Fatalf("a message within the bound was changed")
				}
				return
			}
			if !strings.HasSuffix(got, truncatedMark) || !strings.HasPrefix(tc.message, strings.TrimSuffix(got, truncatedMark)) {
				t.Fatalf("not a marked prefix of the message: ...%q", got[len(got)-40:])
			}
			if len(got) < MaxConditionMessageLength-utf8.UTFMax {
				t.Fatalf("cut to %d bytes, more than a character below the bound", len(got))
			}
		})
	}
}

// TestSummaryBounded: the condition message of many long failures stays within the bound.
func TestSummaryBounded(t *testing.T) {
	var failures []Failure
	for i := 0; i < 2*MaxMessages; i++ {
		failures = append(failures, Failure{Reason: "FailedCreate", Message: strings.Repeat("x", MaxConditionMessageLength/2)})
	}
	reason, message, ok := Summary(failures)
	if !ok || reason != "FailedCreate" {
		t.Fatalf("Summary = %q, %v", reason, ok)
	}
	if len(message) > MaxConditionMessageLength || !strings.HasSuffix(message, truncatedMark) {
		t.Fatalf("message of %d bytes, want at most %d and marked", len(message), MaxConditionMessageLength)
	}
}
