// Package interning makes the objects the watch cache keeps share the values they repeat. A decoded object
// owns a copy of everything it holds: each string (image, label keys and values, defaulted policies), each
// map, slice and pointed-to struct (labels, containers, a security context, managedFields), each pod
// template. 10,000 TApps made from a few templates hold 10,000 copies of each. A Table walks an object once,
// after it is decoded, and points each such part at the one copy it already holds of an equal part.
//
// What is shared:
//   - strings, and the bytes of managedFields sets;
//   - maps, slices and pointers (labels, selectors, a TApp's templates, containers, tolerations,
//     managedFields, a security context);
//   - pod templates and pod specs, whose every part is then shared.
//
// Parts are equal when every exported field is, nil and empty told apart. Values that name one object (metadata.name, uid,
// resourceVersion, an owner's name and uid) are left alone, and the table is bounded: when it is full it
// starts again empty, so values that never repeat cost a lookup, not memory.
//
// Objects must not be changed after they are interned, as the watch cache's objects never are: two of them
// may hold the same map.
package interning

import (
	"encoding/binary"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	// maxStringBytes is the longest string interned; longer ones (a last-applied configuration) are rarely
	// repeated.
	maxStringBytes = 1 << 10
	// maxValueBytes is the longest managedFields set or part interned, as its encoding.
	maxValueBytes = 16 << 10
	// maxTableBytes bounds what a table holds, its keys and about what the parts it keeps take; past it the
	// table starts again empty, and the parts no object holds any more are garbage.
	maxTableBytes = 8 << 20
	// entryBytes is about what the table's maps spend on each entry beside the value itself.
	entryBytes = 64
)

// Table holds one copy of each value interned. It is safe for concurrent use.
type Table struct {
	mu     sync.Mutex
	values map[string]string
	fields map[string][]byte
	// parts holds, per type, the parts shared by their encoding.
	parts map[reflect.Type]map[string]reflect.Value
	bytes int
	// scratch holds the encoding of the part being looked up.
	scratch []byte
}

// NewTable returns an empty table.
func NewTable() *Table {
	return &Table{values: map[string]string{}, fields: map[string][]byte{}, parts: map[reflect.Type]map[string]reflect.Value{}}
}

// Object points the repeated parts of obj at the table's copies. obj must be a pointer.
func (t *Table) Object(obj runtime.Object) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.walk(v.Elem())
}

// Decoding returns codec with every object it decodes interned in t.
func (t *Table) Decoding(codec runtime.Codec) runtime.Codec {
	return decodingCodec{Codec: codec, table: t}
}

type decodingCodec struct {
	runtime.Codec
	table *Table
}

func (c decodingCodec) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, gvk, err := c.Codec.Decode(data, defaults, into)
	if err == nil && obj != nil {
		c.table.Object(obj)
	}
	return obj, gvk, err
}

// Len returns the number of values and parts the table holds.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.values) + len(t.fields)
	for _, parts := range t.parts {
		n += len(parts)
	}
	return n
}

var (
	objectMetaType     = reflect.TypeFor[metav1.ObjectMeta]()
	ownerReferenceType = reflect.TypeFor[metav1.OwnerReference]()
	fieldsV1Type       = reflect.TypeFor[metav1.FieldsV1]()
	timeType           = reflect.TypeFor[metav1.Time]()
	quantityType       = reflect.TypeFor[resource.Quantity]()
)

// sharedStructs are the struct types shared as a whole when equal; other structs are shared through their
// maps, slices and pointers.
var sharedStructs = map[reflect.Type]bool{
	reflect.TypeFor[corev1.PodTemplateSpec](): true,
	reflect.TypeFor[corev1.PodSpec]():         true,
}

// ownValues lists, per type, the fields whose values name one object and are never repeated.
var ownValues = map[reflect.Type]map[string]bool{
	objectMetaType:     {"Name": true, "GenerateName": true, "UID": true, "ResourceVersion": true, "SelfLink": true},
	ownerReferenceType: {"Name": true, "UID": true},
}

// walker interns the parts of a value of one type; a nil walker stands for a type that holds none
// (numbers, booleans, times), which is not walked.
type walker func(t *Table, v reflect.Value)

// walkers holds the walker of each type met, made once.
var walkers sync.Map // reflect.Type → *walker

func (t *Table) walk(v reflect.Value) {
	if w := walkerOf(v.Type()); w != nil {
		w(t, v)
	}
}

func walkerOf(typ reflect.Type) walker {
	if w, ok := walkers.Load(typ); ok {
		return *w.(*walker)
	}
	// A recursive type finds its own walker through this indirection while it is being made.
	var made walker
	indirect := &made
	if w, loaded := walkers.LoadOrStore(typ, indirect); loaded {
		return *w.(*walker)
	}
	made = newWalker(typ, func(t *Table, v reflect.Value) {
		if *indirect != nil {
			(*indirect)(t, v)
		}
	})
	if encode := encoderOf(typ); made != nil && encode != nil && shareable(typ) {
		made = sharing(typ, made, encode)
	}
	return made
}

// shareable says whether a part of typ is worth sharing as a whole: it holds memory of its own beyond what
// a copy of it holds.
func shareable(typ reflect.Type) bool {
	switch typ.Kind() {
	case reflect.Slice, reflect.Pointer:
		// Parts that name one object (owner references) are never equal to another's.
		return ownValues[typ.Elem()] == nil
	case reflect.Map:
		return true
	case reflect.Struct:
		return sharedStructs[typ]
	}
	return false
}

// sharing wraps the walker of a shareable type: an equal part already in the table replaces the value;
// otherwise the value's own parts are walked and the value joins the table.
func sharing(typ reflect.Type, walk walker, encode encoder) walker {
	return func(t *Table, v reflect.Value) {
		if !v.CanSet() || isEmpty(v) {
			walk(t, v)
			return
		}
		t.scratch = encode(t.scratch[:0], v)
		if t.scratch == nil || len(t.scratch) > maxValueBytes {
			t.scratch = t.scratch[:0]
			walk(t, v)
			return
		}
		parts := t.parts[typ]
		if shared, ok := parts[string(t.scratch)]; ok {
			v.Set(shared)
			return
		}
		encoding := string(t.scratch)
		walk(t, v)
		// The encoding is the key; the part kept takes a few times its encoding in memory, and once the
		// objects that held it are gone only the table holds it.
		t.reserve(4 * len(encoding))
		// reserve may have emptied the table.
		if parts = t.parts[typ]; parts == nil {
			parts = map[string]reflect.Value{}
			t.parts[typ] = parts
		}
		kept := reflect.New(typ).Elem()
		kept.Set(v)
		parts[encoding] = kept
	}
}

func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Map, reflect.Slice:
		return v.Len() == 0
	case reflect.Pointer:
		return v.IsNil()
	}
	return false
}

// newWalker makes the walker of typ; self stands for it within its own elements.
func newWalker(typ reflect.Type, self walker) walker {
	switch typ.Kind() {
	case reflect.String:
		return func(t *Table, v reflect.Value) {
			if v.CanSet() && v.Len() > 0 {
				v.SetString(t.value(v.String()))
			}
		}
	case reflect.Pointer:
		elem := elemWalker(typ.Elem(), typ, self)
		if elem == nil {
			return nil
		}
		return func(t *Table, v reflect.Value) {
			if !v.IsNil() {
				elem(t, v.Elem())
			}
		}
	case reflect.Interface:
		return func(t *Table, v reflect.Value) {
			if !v.IsNil() {
				t.walk(v.Elem())
			}
		}
	case reflect.Slice, reflect.Array:
		if typ.Elem().Kind() == reflect.Uint8 {
			return nil
		}
		elem := elemWalker(typ.Elem(), typ, self)
		if elem == nil {
			return nil
		}
		return func(t *Table, v reflect.Value) {
			for i := range v.Len() {
				elem(t, v.Index(i))
			}
		}
	case reflect.Map:
		key, elem := elemWalker(typ.Key(), typ, self), elemWalker(typ.Elem(), typ, self)
		if key == nil && elem == nil {
			return nil
		}
		return func(t *Table, v reflect.Value) { t.walkMap(v, key, elem) }
	case reflect.Struct:
		if typ == timeType {
			return nil
		}
		if typ == fieldsV1Type {
			return func(t *Table, v reflect.Value) {
				if raw := v.Field(0); raw.CanSet() && raw.Len() > 0 {
					raw.SetBytes(t.fieldsSet(raw.Bytes()))
				}
			}
		}
		type field struct {
			index int
			walk  walker
		}
		var fields []field
		own := ownValues[typ]
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() || own[f.Name] {
				continue
			}
			if w := elemWalker(f.Type, typ, self); w != nil {
				fields = append(fields, field{i, w})
			}
		}
		if len(fields) == 0 {
			return nil
		}
		return func(t *Table, v reflect.Value) {
			for _, f := range fields {
				f.walk(t, v.Field(f.index))
			}
		}
	}
	return nil
}

// elemWalker is the walker of an element of typ whose own type is elem.
func elemWalker(elem, typ reflect.Type, self walker) walker {
	if elem == typ {
		return self
	}
	return walkerOf(elem)
}

// walkMap replaces each entry of a map with its interned key and element. Assigning to a key a map holds
// keeps the map's size; for string keys it also stores the key assigned.
func (t *Table) walkMap(m reflect.Value, key, elem walker) {
	if m.Len() == 0 {
		return
	}
	var k, e reflect.Value
	if key != nil {
		k = reflect.New(m.Type().Key()).Elem()
	}
	if elem != nil {
		e = reflect.New(m.Type().Elem()).Elem()
	}
	iter := m.MapRange()
	for iter.Next() {
		mk, me := iter.Key(), iter.Value()
		if key != nil {
			k.Set(mk)
			key(t, k)
			mk = k
		}
		if elem != nil {
			e.Set(me)
			elem(t, e)
			me = e
		}
		m.SetMapIndex(mk, me)
	}
}

// encoder appends the encoding of a value to b, or returns nil when the value cannot be encoded. Equal
// encodings stand for equal values: every exported field counts, and a nil map, slice or pointer differs from
// an empty one.
type encoder func(b []byte, v reflect.Value) []byte

// encoders holds the encoder of each type met; a nil encoder stands for a type that has none.
var encoders sync.Map // reflect.Type → encoder

func encoderOf(typ reflect.Type) encoder {
	if e, ok := encoders.Load(typ); ok {
		return e.(encoder)
	}
	// A recursive type has no encoder: its elements find none while it is being made.
	encoders.Store(typ, encoder(nil))
	e := newEncoder(typ)
	encoders.Store(typ, e)
	return e
}

func newEncoder(typ reflect.Type) encoder {
	switch typ {
	case timeType:
		return func(b []byte, v reflect.Value) []byte {
			t := v.Addr().Interface().(*metav1.Time)
			return appendString(binary.AppendVarint(b, t.UnixNano()), t.Location().String())
		}
	case quantityType:
		// A quantity is written as its canonical form, which is what it serializes to.
		return func(b []byte, v reflect.Value) []byte {
			return appendString(b, v.Addr().Interface().(*resource.Quantity).String())
		}
	}
	switch typ.Kind() {
	case reflect.String:
		return func(b []byte, v reflect.Value) []byte { return appendString(b, v.String()) }
	case reflect.Bool:
		return func(b []byte, v reflect.Value) []byte {
			if v.Bool() {
				return append(b, 1)
			}
			return append(b, 0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(b []byte, v reflect.Value) []byte { return binary.AppendVarint(b, v.Int()) }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(b []byte, v reflect.Value) []byte { return binary.AppendUvarint(b, v.Uint()) }
	case reflect.Float32, reflect.Float64:
		return func(b []byte, v reflect.Value) []byte {
			return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float()))
		}
	case reflect.Pointer:
		elem := encoderOf(typ.Elem())
		if elem == nil {
			return nil
		}
		return nilable(func(b []byte, v reflect.Value) []byte { return elem(b, v.Elem()) })
	case reflect.Slice:
		if typ.Elem().Kind() == reflect.Uint8 {
			return nilable(func(b []byte, v reflect.Value) []byte { return appendString(b, string(v.Bytes())) })
		}
		elem := encoderOf(typ.Elem())
		if elem == nil {
			return nil
		}
		return nilable(func(b []byte, v reflect.Value) []byte {
			b = binary.AppendUvarint(b, uint64(v.Len()))
			for i := range v.Len() {
				if b = elem(b, v.Index(i)); b == nil {
					return nil
				}
			}
			return b
		})
	case reflect.Map:
		key, elem := encoderOf(typ.Key()), encoderOf(typ.Elem())
		if key == nil || elem == nil || typ.Key().Kind() != reflect.String {
			return nil
		}
		return nilable(func(b []byte, v reflect.Value) []byte {
			keys := v.MapKeys()
			slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
			b = binary.AppendUvarint(b, uint64(len(keys)))
			value := reflect.New(typ.Elem()).Elem()
			for _, k := range keys {
				b = key(b, k)
				value.Set(v.MapIndex(k))
				if b = elem(b, value); b == nil {
					return nil
				}
			}
			return b
		})
	case reflect.Struct:
		// Every field counts, so a struct with fields that cannot be read has no encoding.
		fields := make([]encoder, typ.NumField())
		for i := range typ.NumField() {
			if !typ.Field(i).IsExported() {
				return nil
			}
			if fields[i] = encoderOf(typ.Field(i).Type); fields[i] == nil {
				return nil
			}
		}
		return func(b []byte, v reflect.Value) []byte {
			for i, field := range fields {
				if b = field(b, v.Field(i)); b == nil {
					return nil
				}
			}
			return b
		}
	}
	return nil
}

// nilable writes a nil map, slice or pointer as 0 and any other as 1 followed by what enc writes.
func nilable(enc encoder) encoder {
	return func(b []byte, v reflect.Value) []byte {
		if v.IsNil() {
			return append(b, 0)
		}
		return enc(append(b, 1), v)
	}
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func (t *Table) value(s string) string {
	if len(s) > maxStringBytes {
		return s
	}
	if shared, ok := t.values[s]; ok {
		return shared
	}
	t.reserve(len(s))
	t.values[s] = s
	return s
}

func (t *Table) fieldsSet(raw []byte) []byte {
	if len(raw) > maxValueBytes {
		return raw
	}
	if shared, ok := t.fields[string(raw)]; ok {
		return shared
	}
	t.reserve(len(raw))
	t.fields[string(raw)] = raw
	return raw
}

// reserve makes room for a value of n bytes, emptying the table when it would pass its bound.
func (t *Table) reserve(n int) {
	n += entryBytes
	if t.bytes+n > maxTableBytes {
		clear(t.values)
		clear(t.fields)
		clear(t.parts)
		t.bytes = 0
	}
	t.bytes += n
}
