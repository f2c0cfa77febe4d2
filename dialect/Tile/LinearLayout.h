//===- LinearLayout.h - Tiles spread over registers, lanes, warps -*- C++ -*-//
//
// Every layout of a power-of-two tile is linear over GF(2): each bit of a
// register index, lane id and warp id contributes one basis vector of tile
// coordinates, and an element's coordinates are the XOR of the bases of the
// bits that are set. Replication (several threads holding one element) is a
// zero basis. Lowerings compute addresses, shuffles and conversions from
// these bases alone, whatever named layout they came from.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_DIALECT_TILE_LINEARLAYOUT_H
#define TEGULA_DIALECT_TILE_LINEARLAYOUT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tegula::tile {

class LinearLayout {
public:
  using Coords = llvm::SmallVector<int64_t, 4>;

  LinearLayout() = default;
  explicit LinearLayout(llvm::ArrayRef<int64_t> shape)
      : shape(shape.begin(), shape.end()) {}

  llvm::ArrayRef<int64_t> getShape() const { return shape; }
  unsigned getRank() const { return shape.size(); }

  llvm::ArrayRef<Coords> getRegBases() const { return regBases; }
  llvm::ArrayRef<Coords> getLaneBases() const { return laneBases; }
  llvm::ArrayRef<Coords> getWarpBases() const { return warpBases; }

  int64_t getNumRegs() const { return int64_t(1) << regBases.size(); }
  int64_t getNumLanes() const { return int64_t(1) << laneBases.size(); }
  int64_t getNumWarps() const { return int64_t(1) << warpBases.size(); }

  /// Appends a basis; `coords` has one entry per tile dimension.
  void addRegBasis(Coords coords) { regBases.push_back(std::move(coords)); }
  void addLaneBasis(Coords coords) { laneBases.push_back(std::move(coords)); }
  void addWarpBasis(Coords coords) { warpBases.push_back(std::move(coords)); }

  /// Coordinates of register `reg` of lane `lane` in warp `warp`.
  Coords apply(int64_t reg, int64_t lane, int64_t warp) const;

  /// Coordinates of register `reg` relative to the thread's first register.
  Coords regOffset(int64_t reg) const { return apply(reg, 0, 0); }

  /// The bits that registers (or lanes and warps) may set in coordinates
  /// along `dim`: the OR of their bases' entries there.
  int64_t getRegBits(unsigned dim) const;
  int64_t getThreadBits(unsigned dim) const;

  /// True when every element of the tile is held by some thread.
  bool isSurjective() const;

  /// The layout with tile dimension `dim` projected away; register bases
  /// that become zero are dropped, since they would only duplicate values.
  LinearLayout sliceDim(unsigned dim) const;

  /// The layout with a unit dimension inserted at `dim`.
  LinearLayout insertUnitDim(unsigned dim) const;

  /// The same distribution of a 2-D tile's transpose: coordinates swapped.
  LinearLayout transposed() const;

  /// The same distribution of the tile with its dimensions reordered:
  /// dimension i of the result is dimension order[i] of this one.
  LinearLayout permuted(llvm::ArrayRef<int32_t> order) const;

  /// The same distribution of the tile reshaped to `newShape` (the same
  /// element count; elements keep their row-major position).
  LinearLayout reshaped(llvm::ArrayRef<int64_t> newShape) const;

  /// Every basis mapped by `map`, a linear map into a tile of `newShape`.
  LinearLayout remapped(llvm::ArrayRef<int64_t> newShape,
                        llvm::function_ref<Coords(const Coords &)> map) const;

  /// Drops register bases that are zero (pure duplicates).
  LinearLayout withoutDuplicateRegs() const;

  bool operator==(const LinearLayout &other) const {
    return shape == other.shape && regBases == other.regBases &&
           laneBases == other.laneBases && warpBases == other.warpBases;
  }
  bool operator!=(const LinearLayout &other) const { return !(*this == other); }

  /// `reg = [[0, 1], [8, 0]], lane = [...], warp = [...]`.
  std::string str() const;

private:
  llvm::SmallVector<int64_t, 4> shape;
  llvm::SmallVector<Coords> regBases, laneBases, warpBases;
};

/// For every register of `to`, the register of `from` holding the same
/// element, when the two layouts agree on what lanes and warps hold (after
/// `project` maps `to`'s coordinates into `from`'s); none otherwise, in
/// which case the data must move between threads.
std::optional<llvm::SmallVector<int64_t>> getRegisterMapping(
    const LinearLayout &from, const LinearLayout &to,
    llvm::function_ref<LinearLayout::Coords(const LinearLayout::Coords &)>
        project);

} // namespace tegula::tile

#endif // TEGULA_DIALECT_TILE_LINEARLAYOUT_H
