package main

import (
	_ "embed"
	"fmt"
	"math"
	"slices"
	"strings"
)

// opticks is Newton's Opticks (1730), public domain; see SOURCES.md.
//
//go:embed opticks.txt
var opticks string

// corpus is a text as a sequence of character ids.
type corpus struct {
	chars []rune       // id → character, sorted
	ids   map[rune]int // character → id
	text  []int        // the text as ids
}

// newCorpus numbers the distinct characters of s in sorted order.
func newCorpus(s string) *corpus {
	rs := []rune(s)
	c := &corpus{ids: map[rune]int{}}
	for _, r := range rs {
		if _, ok := c.ids[r]; !ok {
			c.ids[r] = 0
			c.chars = append(c.chars, r)
		}
	}
	slices.Sort(c.chars)
	for i, r := range c.chars {
		c.ids[r] = i
	}
	c.text = make([]int, len(rs))
	for i, r := range rs {
		c.text[i] = c.ids[r]
	}
	return c
}

// encode returns the ids of s's characters; a character outside the
// vocabulary is an error.
func (c *corpus) encode(s string) ([]int, error) {
	var out []int
	for _, r := range s {
		id, ok := c.ids[r]
		if !ok {
			return nil, fmt.Errorf("character %q is not in the text's vocabulary", r)
		}
		out = append(out, id)
	}
	return out, nil
}

// decode returns the text of ids.
func (c *corpus) decode(ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		b.WriteRune(c.chars[id])
	}
	return b.String()
}

// baselines returns the bits per character on val of a unigram and a
// bigram model with add-one (Laplace) smoothing over a vocabulary of v
// characters, both counted on train:
//
//	p(c) = (n(c) + 1) / (N + v),   p(c | a) = (n(a c) + 1) / (n(a ·) + v)
//
// The unigram scores every character of val, the bigram each character
// after the first given the one before it.
func baselines(train, val []int, v int) (unigram, bigram float64) {
	uni := make([]float64, v)
	pair := make([]float64, v*v)
	from := make([]float64, v)
	for i, c := range train {
		uni[c]++
		if i > 0 {
			pair[train[i-1]*v+c]++
			from[train[i-1]]++
		}
	}
	n := float64(len(train))
	for _, c := range val {
		unigram -= math.Log2((uni[c] + 1) / (n + float64(v)))
	}
	for i := 1; i < len(val); i++ {
		a, c := val[i-1], val[i]
		bigram -= math.Log2((pair[a*v+c] + 1) / (from[a] + float64(v)))
	}
	return unigram / float64(len(val)), bigram / float64(len(val)-1)
}
