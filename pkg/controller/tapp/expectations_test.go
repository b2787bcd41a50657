package tapp

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestExpectations(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Now())
	e := newExpectations(clk)
	if !e.satisfied("ns/a") {
		t.Fatal("nothing pending must be satisfied")
	}
	e.expectCreate("ns/a", "a-0")
	e.expectDelete("ns/a", "uid-1")
	e.expectUpdate("ns/a", "a-2", "h2")
	if e.satisfied("ns/a") {
		t.Fatal("pending writes must not be satisfied")
	}
	e.observeCreate("ns/a", "a-0")
	e.observeDelete("ns/a", "uid-1")
	e.observeUpdate("ns/a", "a-2", "old-hash")
	if e.satisfied("ns/a") {
		t.Fatal("an update is satisfied only by the written hash")
	}
	e.observeUpdate("ns/a", "a-2", "h2")
	if !e.satisfied("ns/a") {
		t.Fatal("all writes observed")
	}

	e.expectCreate("ns/b", "b-0")
	clk.SetTime(clk.Now().Add(expectationsTTL + time.Second))
	if !e.satisfied("ns/b") {
		t.Fatal("expired expectations must be satisfied")
	}
	e.expectCreate("ns/c", "c-0")
	e.forget("ns/c")
	if !e.satisfied("ns/c") {
		t.Fatal("forgotten key must be satisfied")
	}
}
