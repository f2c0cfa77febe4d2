//===- TestPasses.h - Passes that print analyses for lit --------*- C++ -*-===//
//
// The tile-test-* passes (TestPasses.td): registered by tile-opt only.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_TEST_LIB_TESTPASSES_H
#define TEGULA_TEST_LIB_TESTPASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tegula::tile {

#define GEN_PASS_DECL
#include "TestPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "TestPasses.h.inc"

} // namespace tegula::tile

#endif // TEGULA_TEST_LIB_TESTPASSES_H
