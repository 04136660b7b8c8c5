package conformance

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// The model on small hand-written histories.
func TestLinearizabilityModel(t *testing.T) {
	op := func(client int, call, ret int64, in linInput, out linOutput) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
	}
	incr := func(d int64) linInput { return linInput{Kind: linIncr, Delta: d} }
	read := linInput{Kind: linRead}
	n := func(v int64) linOutput { return linOutput{OK: true, N: v} }
	found := func(hasV bool, v, nn int64) linOutput {
		return linOutput{Found: true, HasV: hasV, V: v, HasN: true, N: nn}
	}
	cases := []struct {
		name string
		ops  []porcupine.Operation
		want bool
	}{
		{"concurrent increments in either order", []porcupine.Operation{
			op(0, 1, 4, incr(1), n(3)),
			op(1, 2, 3, incr(2), n(2)),
			op(2, 5, 6, read, found(false, 0, 3)),
		}, true},
		{"read of a value overwritten before it began", []porcupine.Operation{
			op(0, 1, 2, incr(1), n(1)),
			op(1, 3, 4, incr(1), n(2)),
			op(2, 5, 6, read, found(false, 0, 1)),
		}, false},
		{"lost increment", []porcupine.Operation{
			op(0, 1, 2, incr(1), n(1)),
			op(1, 3, 4, incr(1), n(1)),
		}, false},
		{"cas needs the value", []porcupine.Operation{
			op(0, 1, 2, linInput{Kind: linCreate, Arg: 5}, linOutput{OK: true}),
			op(1, 3, 4, linInput{Kind: linCAS, Arg: 5}, linOutput{OK: true}),
			op(2, 5, 6, linInput{Kind: linCAS, Arg: 5}, linOutput{OK: true}),
		}, false},
		{"an unknown write may or may not happen", []porcupine.Operation{
			op(0, 1, 1<<62, incr(1), linOutput{Unknown: true}),
			op(1, 2, 3, read, linOutput{}),
			op(1, 4, 5, read, found(false, 0, 1)),
		}, true},
		{"create fails on a row that exists through its counter", []porcupine.Operation{
			op(0, 1, 2, incr(1), n(1)),
			op(1, 3, 4, linInput{Kind: linCreate, Arg: 0}, linOutput{OK: true}),
		}, false},
	}
	m := linModel()
	for _, c := range cases {
		if got := porcupine.CheckOperations(m, c.ops); got != c.want {
			t.Errorf("%s: linearizable = %v, want %v", c.name, got, c.want)
		}
	}
}
