package history

import (
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tapp-io/tapp-apiserver/pkg/stablehash"
)

// Hash returns the revision hash of an owner's revision data (stablehash.Bytes), with "/<collisionCount>"
// appended to the data when collisionCount is > 0, so that the owner moves to another revision name after
// a hash collision, as Kubernetes' history library does.
func Hash(data []byte, collisionCount *int32) string {
	if c := collisionCount; c != nil && *c > 0 {
		data = append(data[:len(data):len(data)], '/')
		data = strconv.AppendInt(data, int64(*c), 10)
	}
	return stablehash.Bytes(data)
}

// Name returns the name of the owner's revision of hash, "<owner>-<hash>". It is a valid label value (it is
// also written as one): when it would be too long, owner is cut by cut(owner, n) to at most n characters
// and the suffix becomes a hash of the full owner name and hash, so that two long names with a common
// prefix still get different revision names. How names are cut is the owner's controller's.
func Name(owner, hash string, cut func(s string, n int) string) string {
	name := owner + "-" + hash
	if len(name) <= validation.LabelValueMaxLength {
		return name
	}
	return cut(owner, validation.LabelValueMaxLength-1-stablehash.Length) + "-" + stablehash.String(owner+"/"+hash)
}
