//===- LinearLayout.cpp - Linear layouts over GF(2) -----------------------===//

#include "Tile/LinearLayout.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

using namespace tegula::tile;

LinearLayout::Coords LinearLayout::apply(int64_t reg, int64_t lane,
                                         int64_t warp) const {
  Coords coords(shape.size(), 0);
  auto accumulate = [&](llvm::ArrayRef<Coords> bases, int64_t index) {
    for (auto [bit, basis] : llvm::enumerate(bases))
      if (index & (int64_t(1) << bit))
        for (auto [value, add] : llvm::zip(coords, basis))
          value ^= add;
  };
  accumulate(regBases, reg);
  accumulate(laneBases, lane);
  accumulate(warpBases, warp);
  return coords;
}

namespace {
int64_t bitsAlong(llvm::ArrayRef<LinearLayout::Coords> bases, unsigned dim) {
  int64_t bits = 0;
  for (const LinearLayout::Coords &basis : bases)
    bits |= basis[dim];
  return bits;
}
} // namespace

int64_t LinearLayout::getRegBits(unsigned dim) const {
  return bitsAlong(regBases, dim);
}

int64_t LinearLayout::getThreadBits(unsigned dim) const {
  return bitsAlong(laneBases, dim) | bitsAlong(warpBases, dim);
}

bool LinearLayout::isSurjective() const {
  int64_t elements = 1;
  for (int64_t extent : shape)
    elements *= extent;
  std::set<Coords> seen;
  for (int64_t warp = 0; warp < getNumWarps(); ++warp)
    for (int64_t lane = 0; lane < getNumLanes(); ++lane)
      for (int64_t reg = 0; reg < getNumRegs(); ++reg)
        seen.insert(apply(reg, lane, warp));
  return static_cast<int64_t>(seen.size()) == elements;
}

LinearLayout LinearLayout::withoutDuplicateRegs() const {
  LinearLayout result = *this;
  llvm::erase_if(result.regBases, [](const Coords &basis) {
    return llvm::all_of(basis, [](int64_t value) { return value == 0; });
  });
  return result;
}

LinearLayout LinearLayout::sliceDim(unsigned dim) const {
  llvm::SmallVector<int64_t> newShape(shape.begin(), shape.end());
  newShape.erase(newShape.begin() + dim);
  return remapped(newShape,
                  [dim](const Coords &basis) {
                    Coords out(basis);
                    out.erase(out.begin() + dim);
                    return out;
                  })
      .withoutDuplicateRegs();
}

LinearLayout LinearLayout::insertUnitDim(unsigned dim) const {
  llvm::SmallVector<int64_t> newShape(shape.begin(), shape.end());
  newShape.insert(newShape.begin() + dim, 1);
  return remapped(newShape, [dim](const Coords &basis) {
    Coords out(basis);
    out.insert(out.begin() + dim, 0);
    return out;
  });
}

LinearLayout LinearLayout::transposed() const {
  assert(shape.size() == 2 && "only 2-D layouts transpose");
  return permuted({1, 0});
}

LinearLayout LinearLayout::permuted(llvm::ArrayRef<int32_t> order) const {
  assert(order.size() == shape.size() && "one entry per dimension");
  Coords permutedShape;
  for (int32_t dim : order)
    permutedShape.push_back(shape[dim]);
  return remapped(permutedShape, [&](const Coords &c) {
    Coords out;
    for (int32_t dim : order)
      out.push_back(c[dim]);
    return out;
  });
}

LinearLayout LinearLayout::reshaped(llvm::ArrayRef<int64_t> newShape) const {
  // Power-of-two extents make the row-major position the concatenation of
  // the coordinates' bits, so it maps XORs of bases to XORs.
  return remapped(newShape, [&](const Coords &c) {
    int64_t flat = 0;
    for (auto [extent, coord] : llvm::zip(shape, c))
      flat = flat * extent + coord;
    Coords out(newShape.size());
    for (size_t d = newShape.size(); d-- > 0;) {
      out[d] = flat % newShape[d];
      flat /= newShape[d];
    }
    return out;
  });
}

LinearLayout
LinearLayout::remapped(llvm::ArrayRef<int64_t> newShape,
                       llvm::function_ref<Coords(const Coords &)> map) const {
  LinearLayout result(newShape);
  for (const Coords &basis : regBases)
    result.addRegBasis(map(basis));
  for (const Coords &basis : laneBases)
    result.addLaneBasis(map(basis));
  for (const Coords &basis : warpBases)
    result.addWarpBasis(map(basis));
  return result;
}

std::string LinearLayout::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto printBases = [&](llvm::StringRef name, llvm::ArrayRef<Coords> bases) {
    os << name << " = [";
    llvm::interleaveComma(bases, os, [&](const Coords &basis) {
      os << "[";
      llvm::interleaveComma(basis, os);
      os << "]";
    });
    os << "]";
  };
  printBases("reg", regBases);
  os << ", ";
  printBases("lane", laneBases);
  os << ", ";
  printBases("warp", warpBases);
  return text;
}

std::optional<llvm::SmallVector<int64_t>> tegula::tile::getRegisterMapping(
    const LinearLayout &from, const LinearLayout &to,
    llvm::function_ref<LinearLayout::Coords(const LinearLayout::Coords &)>
        project) {
  if (from.getLaneBases().size() != to.getLaneBases().size() ||
      from.getWarpBases().size() != to.getWarpBases().size())
    return std::nullopt;
  for (auto [a, b] : llvm::zip(from.getLaneBases(), to.getLaneBases()))
    if (a != project(b))
      return std::nullopt;
  for (auto [a, b] : llvm::zip(from.getWarpBases(), to.getWarpBases()))
    if (a != project(b))
      return std::nullopt;
  llvm::DenseMap<LinearLayout::Coords, int64_t> fromRegs;
  for (int64_t reg = from.getNumRegs() - 1; reg >= 0; --reg)
    fromRegs[from.regOffset(reg)] = reg;
  llvm::SmallVector<int64_t> mapping;
  for (int64_t reg = 0; reg < to.getNumRegs(); ++reg) {
    auto it = fromRegs.find(project(to.regOffset(reg)));
    if (it == fromRegs.end())
      return std::nullopt;
    mapping.push_back(it->second);
  }
  return mapping;
}
