package stablehash

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"unicode/utf8"
)

// canonicalize writes the canonical form of raw, the output of json.Marshal, to out in one pass over its
// bytes: object members sorted by key, members whose value is null or an empty array left out, everything
// else as it is. It gives the bytes that decoding raw into generic values, dropping those members and
// encoding again would give, without building the generic values.
func canonicalize(out *bytes.Buffer, raw []byte) error {
	c := canonicalizers.Get().(*canonicalizer)
	defer canonicalizers.Put(c)
	c.data, c.pos, c.depth = raw, 0, 0
	defer func() {
		// Let go of the caller's bytes: the pool keeps only the buffers.
		c.data = nil
		for d := range c.members {
			clear(c.members[d])
		}
	}()
	start := out.Len()
	if err := c.value(out); err != nil {
		out.Truncate(start)
		return err
	}
	if c.pos != len(c.data) {
		out.Truncate(start)
		return fmt.Errorf("stablehash: %d bytes after the JSON value", len(c.data)-c.pos)
	}
	return nil
}

// canonicalizers keeps canonicalizers with their scratch buffers for the next call.
var canonicalizers = sync.Pool{New: func() any { return new(canonicalizer) }}

type canonicalizer struct {
	data []byte
	pos  int
	// depth is how many objects the current position is in; an object at depth d collects its members in
	// scratch[d] and members[d], reused by the objects after it at that depth.
	depth   int
	scratch []*bytes.Buffer
	members [][]member
}

// member is one object member: its key as the bytes of a Go string (members sort by it, as encoding/json
// sorts map keys), its key as written, and where its value's canonical bytes are in the scratch buffer.
type member struct {
	key        []byte
	keyToken   []byte
	valueStart int
	valueEnd   int
}

func (c *canonicalizer) value(out *bytes.Buffer) error {
	if c.pos >= len(c.data) {
		return fmt.Errorf("stablehash: unexpected end of JSON")
	}
	switch b := c.data[c.pos]; {
	case b == '{':
		return c.object(out)
	case b == '[':
		return c.array(out)
	case b == '"':
		token, err := c.stringToken()
		if err != nil {
			return err
		}
		return writeString(out, token)
	default:
		// null, true, false or a number: written as they are (a number keeps its literal, as json.Number does).
		start := c.pos
		for c.pos < len(c.data) && c.data[c.pos] != ',' && c.data[c.pos] != ']' && c.data[c.pos] != '}' {
			c.pos++
		}
		if c.pos == start {
			return fmt.Errorf("stablehash: unexpected %q at offset %d", b, start)
		}
		out.Write(c.data[start:c.pos])
		return nil
	}
}

func (c *canonicalizer) object(out *bytes.Buffer) error {
	c.pos++ // {
	// Each member's canonical value goes to a scratch buffer; the kept members are then written sorted.
	d := c.depth
	if d == len(c.scratch) {
		c.scratch = append(c.scratch, new(bytes.Buffer))
		c.members = append(c.members, nil)
	}
	scratch, members := c.scratch[d], c.members[d][:0]
	scratch.Reset()
	c.depth++
	defer func() { c.depth-- }()
	for {
		if c.pos >= len(c.data) {
			return fmt.Errorf("stablehash: unterminated object")
		}
		if c.data[c.pos] == '}' {
			c.pos++
			break
		}
		if c.data[c.pos] == ',' {
			c.pos++
		}
		keyToken, err := c.stringToken()
		if err != nil {
			return err
		}
		key, err := decodeString(keyToken)
		if err != nil {
			return err
		}
		if c.pos >= len(c.data) || c.data[c.pos] != ':' {
			return fmt.Errorf("stablehash: expected ':' at offset %d", c.pos)
		}
		c.pos++
		valueStart := scratch.Len()
		if err := c.value(scratch); err != nil {
			return err
		}
		value := scratch.Bytes()[valueStart:]
		if string(value) == "null" || string(value) == "[]" {
			scratch.Truncate(valueStart)
			continue
		}
		members = append(members, member{key: key, keyToken: keyToken, valueStart: valueStart, valueEnd: scratch.Len()})
	}
	c.members[d] = members
	byKey := func(a, b member) int { return bytes.Compare(a.key, b.key) }
	if !slices.IsSortedFunc(members, byKey) {
		slices.SortStableFunc(members, byKey)
	}
	out.WriteByte('{')
	written := 0
	for i, m := range members {
		// A repeated key (two map keys whose text is the same) keeps its last value, as decoding into a map
		// does.
		if i+1 < len(members) && bytes.Equal(members[i+1].key, m.key) {
			continue
		}
		if written > 0 {
			out.WriteByte(',')
		}
		written++
		if err := writeString(out, m.keyToken); err != nil {
			return err
		}
		out.WriteByte(':')
		out.Write(scratch.Bytes()[m.valueStart:m.valueEnd])
	}
	out.WriteByte('}')
	return nil
}

func (c *canonicalizer) array(out *bytes.Buffer) error {
	c.pos++ // [
	out.WriteByte('[')
	for first := true; ; first = false {
		if c.pos >= len(c.data) {
			return fmt.Errorf("stablehash: unterminated array")
		}
		if c.data[c.pos] == ']' {
			c.pos++
			break
		}
		if c.data[c.pos] == ',' {
			c.pos++
		}
		if !first {
			out.WriteByte(',')
		}
		// Array elements are kept, null ones too; only object members are left out.
		if err := c.value(out); err != nil {
			return err
		}
	}
	out.WriteByte(']')
	return nil
}

// stringToken returns the string token at the current position, quotes included.
func (c *canonicalizer) stringToken() ([]byte, error) {
	if c.pos >= len(c.data) || c.data[c.pos] != '"' {
		return nil, fmt.Errorf("stablehash: expected a string at offset %d", c.pos)
	}
	start := c.pos
	for c.pos++; c.pos < len(c.data); c.pos++ {
		switch c.data[c.pos] {
		case '\\':
			c.pos++
		case '"':
			c.pos++
			return c.data[start:c.pos], nil
		}
	}
	return nil, fmt.Errorf("stablehash: unterminated string at offset %d", start)
}

// decodeString returns the bytes of the Go string a string token stands for.
func decodeString(token []byte) ([]byte, error) {
	if plainString(token) {
		return token[1 : len(token)-1], nil
	}
	var s string
	err := json.Unmarshal(token, &s)
	return []byte(s), err
}

// plainString tells whether a string token of json.Marshal is written as encoding/json writes the string it
// stands for: without escapes and in UTF-8. A token with escapes may not be (json.Marshal escapes a byte that
// is not UTF-8 as \ufffd, and the character itself is written unescaped), nor may one that is not UTF-8 (a
// json.RawMessage is copied as it is).
func plainString(token []byte) bool {
	return bytes.IndexByte(token, '\\') < 0 && utf8.Valid(token)
}

// writeString writes a string token as encoding/json writes the string it stands for: a plain token as it is,
// any other decoded and encoded again.
func writeString(out *bytes.Buffer, token []byte) error {
	if plainString(token) {
		out.Write(token)
		return nil
	}
	s, err := decodeString(token)
	if err != nil {
		return err
	}
	encoded, err := json.Marshal(string(s))
	if err != nil {
		return err
	}
	out.Write(encoded)
	return nil
}
