// runtime/gradients.h
//
// Kept for code written against API.md, which lists AddGradients here.
// AddGradients lives in ops/ (ops/gradients.h): it builds its nodes with
// //ops' builders, and runtime/'s libraries depend on nothing above them.
// The gradient walk itself, which needs no op library, is
// runtime/gradient_walk.h. New code includes ops/gradients.h.
#ifndef GRAPHGC_RUNTIME_GRADIENTS_H_
#define GRAPHGC_RUNTIME_GRADIENTS_H_

#include "ops/gradients.h"  // IWYU pragma: export

#endif  // GRAPHGC_RUNTIME_GRADIENTS_H_
