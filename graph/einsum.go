package graph

import (
	"strings"
	"unicode/utf8"

	"github.com/gradus-ml/gradus/tensor"
)

// Einsum evaluates a two-operand Einstein summation such as "ij,jk->ik",
// "bij,bjk->bik", "i,i->" or "ij,kj->ik": each letter labels an axis;
// letters in both operands and the output are batch axes, letters in both
// operands only are summed over, and the others are kept. It is composed
// of Sum, Permute, Reshape and one batched MatMul, so its derivatives come
// from theirs. Repeated letters within an operand (diagonals) and
// ellipses are not supported; bad specs panic with a *tensor.Error.
func Einsum(spec string, a, b *Node) *Node {
	const op = "einsum"
	checkNodes(op, a, b)
	in, out, ok := strings.Cut(strings.ReplaceAll(spec, " ", ""), "->")
	la, lb, ok2 := strings.Cut(in, ",")
	if !ok || !ok2 {
		tensor.Fail(op, "spec %q: want \"labels,labels->labels\"", spec)
	}
	if len(la) != a.Dim() || len(lb) != b.Dim() {
		tensor.Fail(op, "spec %q does not fit operands %s", spec, Describe(a, b))
	}
	size := map[rune]int{}
	for _, pair := range []struct {
		labels string
		n      *Node
	}{{la, a}, {lb, b}} {
		seen := map[rune]bool{}
		for i, r := range pair.labels {
			if seen[r] {
				tensor.Fail(op, "spec %q repeats %q in one operand (diagonals are not supported)", spec, r)
			}
			seen[r] = true
			if s, ok := size[r]; ok && s != pair.n.Shape()[i] {
				tensor.Fail(op, "spec %q: axis %q has sizes %d and %d (%s)", spec, r, s, pair.n.Shape()[i], Describe(a, b))
			}
			size[r] = pair.n.Shape()[i]
		}
	}
	inA, inB, inOut := strings.ContainsRune, strings.ContainsRune, strings.ContainsRune
	for i, r := range out {
		if !inA(la, r) && !inB(lb, r) {
			tensor.Fail(op, "spec %q: output axis %q is in neither operand", spec, r)
		}
		if strings.ContainsRune(out[i+utf8.RuneLen(r):], r) {
			tensor.Fail(op, "spec %q repeats %q in the output", spec, r)
		}
	}
	// Sum away the axes that appear in one operand only and not in the output.
	reduce := func(n *Node, labels, other string) (*Node, string) {
		var axes []int
		kept := ""
		for i, r := range labels {
			if !strings.ContainsRune(other, r) && !inOut(out, r) {
				axes = append(axes, i)
			} else {
				kept += string(r)
			}
		}
		if len(axes) > 0 {
			n = Sum(n, axes, false)
		}
		return n, kept
	}
	a, la = reduce(a, la, lb)
	b, lb = reduce(b, lb, la)
	var batch, contr, freeA, freeB string
	for _, r := range la {
		switch {
		case inB(lb, r) && inOut(out, r):
			batch += string(r)
		case inB(lb, r):
			contr += string(r)
		default:
			freeA += string(r)
		}
	}
	for _, r := range lb {
		if !inA(la, r) {
			freeB += string(r)
		}
	}
	prod := func(labels string) int {
		p := 1
		for _, r := range labels {
			p *= size[r]
		}
		return p
	}
	arrange := func(n *Node, labels string, order string) *Node {
		perm := make([]int, len(order))
		for i, r := range order {
			perm[i] = strings.IndexRune(labels, r)
		}
		return permuted(n, perm) // the labels make perm a permutation
	}
	nb, na, nk, nbf := prod(batch), prod(freeA), prod(contr), prod(freeB)
	// The spec's checks above fix every size: the reshapes, permutations
	// and the product below need no second check.
	am := reshaped(arrange(a, la, batch+freeA+contr), nb, na, nk)
	bm := reshaped(arrange(b, lb, batch+contr+freeB), nb, nk, nbf)
	res := MatMul(am, bm) // (batch, freeA, freeB)
	have := batch + freeA + freeB
	shape := make([]int, len(have))
	for i, r := range have {
		shape[i] = size[r]
	}
	res = reshaped(res, shape...)
	if have == out {
		return res
	}
	if len(have) != len(out) {
		tensor.Fail(op, "spec %q: output %q must list the kept axes %q", spec, out, have)
	}
	return arrange(res, have, out)
}
