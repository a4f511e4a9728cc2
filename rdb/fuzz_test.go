package rdb

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// FuzzDecodeObject: decoding arbitrary bytes returns an error or a Value,
// never panics; a Value it returns encodes and decodes back to itself.
func FuzzDecodeObject(f *testing.F) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, kind := range []Kind{KindString, KindList, KindSet, KindHash, KindZSet} {
		for _, n := range []int{1, 4, 140} {
			v := sample(kind, n, false, rng)
			obj, _ := AppendObject(nil, &v)
			f.Add(obj)
		}
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		v, _, err := DecodeObject(p)
		if err != nil {
			return
		}
		obj, err := AppendObject(nil, &v)
		if err != nil {
			t.Fatalf("decoded value does not encode: %v", err)
		}
		back, _, err := DecodeObject(obj)
		if err != nil || !reflect.DeepEqual(canon(back), canon(v)) {
			t.Fatalf("re-encoded value decodes differently: %v", err)
		}
	})
}
