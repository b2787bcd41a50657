// Package controller is the root of the controllers embedded in tapp-apiserver. Today it holds their pure
// planning layers (tapp/policy, yurtappdaemon/policy) and the stable hashes they share (stablehash); the
// informer-driven controllers and executors that act on the plans come next.
package controller
