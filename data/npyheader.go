package data

import (
	"fmt"
	"strconv"
	"strings"
)

// npyDict is the header dictionary of a .npy file.
type npyDict struct {
	descr   string
	fortran bool
	shape   []int
}

// parseNPYDict parses the header dictionary as numpy writes it, a Python
// literal such as {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }
// followed by spaces and a newline. As numpy does, it wants exactly the
// three keys, once each: a second 'shape' must not pass unnoticed, as a
// regular expression that takes the first match would let it. Python 2's
// long integers (3L) are accepted, as numpy accepts them.
func parseNPYDict(h string) (npyDict, error) {
	p := &npyParser{s: h}
	var d npyDict
	bad := func(why string) (npyDict, error) {
		return npyDict{}, fmt.Errorf("malformed header %q: %s", clip(strings.TrimSpace(h)), why)
	}
	if !p.eat('{') {
		return bad("it does not start with {")
	}
	seen := map[string]bool{}
	for !p.eat('}') {
		key, ok := p.str()
		if !ok {
			return bad(fmt.Sprintf("expected a quoted key at byte %d", p.i))
		}
		if seen[key] {
			return bad(fmt.Sprintf("key %q appears twice", key))
		}
		seen[key] = true
		if !p.eat(':') {
			return bad(fmt.Sprintf("expected : after %q", key))
		}
		switch key {
		case "descr":
			if d.descr, ok = p.str(); !ok {
				return bad("descr is not a quoted string (structured dtypes are not supported)")
			}
		case "fortran_order":
			switch {
			case p.word("True"):
				d.fortran = true
			case p.word("False"):
			default:
				return bad("fortran_order is neither True nor False")
			}
		case "shape":
			shape, err := p.tuple()
			if err != nil {
				return npyDict{}, err
			}
			d.shape = shape
		default:
			return bad(fmt.Sprintf("unexpected key %q", key))
		}
		if !p.eat(',') && !p.peek('}') {
			return bad(fmt.Sprintf("expected , or } at byte %d", p.i))
		}
	}
	if len(seen) != 3 {
		return bad("it needs the keys 'descr', 'fortran_order' and 'shape'")
	}
	if rest := strings.TrimSpace(h[p.i:]); rest != "" {
		return bad(fmt.Sprintf("%d bytes follow the dictionary", len(rest)))
	}
	return d, nil
}

// npyParser scans a header dictionary; every method skips white space
// first.
type npyParser struct {
	s string
	i int
}

func (p *npyParser) skip() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

// peek reports whether the next byte is c.
func (p *npyParser) peek(c byte) bool {
	p.skip()
	return p.i < len(p.s) && p.s[p.i] == c
}

// eat consumes c if it is next.
func (p *npyParser) eat(c byte) bool {
	if p.peek(c) {
		p.i++
		return true
	}
	return false
}

// word consumes w if it is next.
func (p *npyParser) word(w string) bool {
	p.skip()
	if strings.HasPrefix(p.s[p.i:], w) {
		p.i += len(w)
		return true
	}
	return false
}

// str consumes a string quoted with ' or " without escapes, the only
// kind numpy writes.
func (p *npyParser) str() (string, bool) {
	p.skip()
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", false
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", false
	}
	v := p.s[p.i+1 : p.i+1+end]
	if strings.ContainsAny(v, "\\\n") {
		return "", false
	}
	p.i += end + 2
	return v, true
}

// tuple consumes a tuple of non-negative integers, such as (), (3,) or
// (2, 3).
func (p *npyParser) tuple() ([]int, error) {
	start := p.i
	if !p.eat('(') {
		return nil, fmt.Errorf("bad shape: not a tuple at byte %d", p.i)
	}
	shape := []int{}
	for !p.eat(')') {
		p.skip()
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		k, err := strconv.Atoi(p.s[p.i:j])
		if err != nil {
			return nil, fmt.Errorf("bad shape %q: a dimension is not a non-negative integer", clip(p.s[start:min(len(p.s), j+1)]))
		}
		p.i = j
		p.word("L")
		shape = append(shape, k)
		if !p.eat(',') && !p.peek(')') {
			return nil, fmt.Errorf("bad shape %q: expected , or ) at byte %d", clip(p.s[start:min(len(p.s), p.i+1)]), p.i)
		}
	}
	return shape, nil
}
