//===- Patterns.h - The pattern sets of convert-tile-to-nvvm ----*- C++ -*-===//
//
// One function per op family; TileToNVVM.cpp gathers them. Dots come from
// the target's instruction family (Families.h).
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_CONVERSION_TILETONVVM_PATTERNS_H
#define TEGULA_LIB_CONVERSION_TILETONVVM_PATTERNS_H

#include "Common.h"

namespace tegula::tile {

void populateTileToNVVMTypeConversions(mlir::TypeConverter &converter);
void populateMemoryOpToNVVMPatterns(const mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns,
                                    LoweringState &state);
void populateAtomicOpToNVVMPatterns(const mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns,
                                    LoweringState &state);
void populateLayoutOpToNVVMPatterns(const mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns,
                                    LoweringState &state);
void populateReduceOpToNVVMPatterns(const mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns,
                                    LoweringState &state);
void populateCumsumOpToNVVMPatterns(const mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns,
                                    LoweringState &state);
void populateAccurateMathToNVVMPatterns(const mlir::TypeConverter &converter,
                                        mlir::RewritePatternSet &patterns);
/// The fast forms of erf, tanh, sigmoid and division (fastmath<afn>).
void populateFastMathToNVVMPatterns(const mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns);
/// An arith.divf marked fastmath<afn>, scalar or not: lowered by
/// populateFastMathToNVVMPatterns, so never legal as it is.
bool isFastDivision(mlir::Operation *op);
void populateAssertOpToNVVMPatterns(const mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns);
void populateElementwiseToNVVMPatterns(const mlir::TypeConverter &converter,
                                       mlir::RewritePatternSet &patterns);
void populatePipelineOpToNVVMPatterns(const mlir::TypeConverter &converter,
                                      mlir::RewritePatternSet &patterns,
                                      LoweringState &state);

} // namespace tegula::tile

#endif // TEGULA_LIB_CONVERSION_TILETONVVM_PATTERNS_H
