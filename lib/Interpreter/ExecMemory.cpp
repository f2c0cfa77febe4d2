//===- ExecMemory.cpp - Global tensors, loads, stores and pipelines -------===//
//
// tile.make_tensor views a parameter's host buffer with checked extents;
// loads, stores and pipeline pushes address it element by element from
// their index tiles, an element outside the extents or masked off reading
// `other` (0 without it) or not being stored. Pipelines are FIFOs of
// blocks, gathered when pushed.
//
//===----------------------------------------------------------------------===//

#include "Machine.h"

#include "Tile/TileOps.h"

#include <algorithm>
#include <cstring>
#include <limits>

using namespace mlir;

namespace tegula::interp {
namespace {

//===----------------------------------------------------------------------===//
// Host memory
//===----------------------------------------------------------------------===//

double readFloat(const rt::HostTensor &t, int64_t index) {
  return t.get(index);
}

int64_t readInt(const rt::HostTensor &t, int64_t index) {
  const uint8_t *p = t.bytes.data() + size_t(index) * rt::dtypeSize(t.dtype);
  switch (t.dtype) {
  case rt::DType::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case rt::DType::I64: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  case rt::DType::Bool:
    return *p != 0;
  default:
    return int64_t(t.get(index));
  }
}

void writeInt(rt::HostTensor &t, int64_t index, int64_t v) {
  uint8_t *p = t.bytes.data() + size_t(index) * rt::dtypeSize(t.dtype);
  switch (t.dtype) {
  case rt::DType::I32: {
    int32_t w = int32_t(v);
    std::memcpy(p, &w, 4);
    return;
  }
  case rt::DType::I64:
    std::memcpy(p, &v, 8);
    return;
  case rt::DType::Bool:
    *p = v != 0;
    return;
  default:
    t.set(index, double(v));
  }
}

/// Where the elements of a tile of indices fall in a global tensor.
class Addressing {
public:
  Addressing(const Machine &m, const RtValue &tensor, ValueRange indices)
      : extents(tensor.extents), strides(extents.size(), 1) {
    for (size_t d = extents.size(); d-- > 1;)
      strides[d - 1] = strides[d] * extents[d];
    for (Value v : indices) {
      idx.push_back(&m.data(v));
      widths.push_back(intWidth(getElementTypeOrSelf(v.getType())));
    }
  }

  /// The row-major offset of element `e`; -1 when one of its indices is
  /// outside the extents.
  int64_t offset(int64_t e) const {
    int64_t offset = 0;
    for (size_t d = 0; d < extents.size(); ++d) {
      int64_t x = asSigned(idx[d]->i[size_t(e)], widths[d]);
      if (x < 0 || x >= extents[d])
        return -1;
      offset += x * strides[d];
    }
    return offset;
  }

private:
  const std::vector<int64_t> &extents;
  std::vector<int64_t> strides;
  std::vector<const Data *> idx;
  std::vector<unsigned> widths;
};

/// Reads the block that a load or a pipeline push addresses; returns how
/// many elements the mask allows lie outside the tensor.
int64_t gather(Machine &m, Value tensor, ValueRange indices, Value mask,
               Value other, Type resultType, Data &out) {
  const RtValue &t = m.get(tensor);
  const rt::HostTensor &buf = m.tensors[size_t(t.param)];
  Type elt = getElementTypeOrSelf(resultType);
  out.shape = shapeOf(resultType);
  out.isFloat = isa<FloatType>(elt);
  int64_t n = product(out.shape);
  if (out.isFloat)
    out.f.assign(size_t(n), 0.0);
  else
    out.i.assign(size_t(n), 0);
  Addressing address(m, t, indices);
  const Data *on = mask ? &m.data(mask) : nullptr;
  const Data *o = other ? &m.data(other) : nullptr;
  int64_t outside = 0;
  for (int64_t e = 0; e < n; ++e) {
    bool allowed = !on || on->i[size_t(e)] != 0;
    int64_t offset = allowed ? address.offset(e) : -1;
    outside += allowed && offset < 0;
    if (offset >= 0) {
      if (out.isFloat)
        out.f[size_t(e)] = readFloat(buf, offset);
      else
        out.i[size_t(e)] = readInt(buf, offset);
    } else if (o) {
      if (out.isFloat)
        out.f[size_t(e)] = o->f[size_t(e)];
      else
        out.i[size_t(e)] = o->i[size_t(e)];
    }
  }
  return outside;
}

//===----------------------------------------------------------------------===//
// Op handlers
//===----------------------------------------------------------------------===//

bool execMakeTensor(Machine &m, tile::MakeTensorOp op) {
  const RtValue &base = m.get(op.getBase());
  RtValue v;
  v.kind = RtValue::Tensor;
  v.param = base.param;
  auto dyn = op.getDynamicDims().begin();
  for (int64_t e : op.getType().getShape()) {
    if (ShapedType::isDynamic(e))
      e = m.data(*dyn++).i[0];
    if (e < 0)
      return m.fail(op, "extent " + Twine(e) + " is negative");
    v.extents.push_back(e);
  }
  const rt::HostTensor &buf = m.tensors[size_t(v.param)];
  // The extents come from the IR; they must fit the buffer they view, so
  // that no in-bounds index can reach outside it.
  int64_t n = 1;
  for (int64_t e : v.extents)
    n = e > 0 && n > std::numeric_limits<int64_t>::max() / e ? -1 : n * e;
  if (n < 0 || n > buf.numel())
    return m.fail(op, "extents " + rt::formatShape(v.extents) +
                          " do not fit the buffer of '" +
                          m.bundle.params[size_t(v.param)].name + "' " +
                          rt::formatShape(buf.shape));
  m.set(op.getResult(), std::move(v));
  return true;
}

bool execDim(Machine &m, tile::DimOp op) {
  Data r;
  r.i = {wrapInt(m.get(op.getTensor()).extents[op.getDim()], 32)};
  m.setData(op.getResult(), std::move(r));
  return true;
}

bool execLoad(Machine &m, tile::LoadOp op) {
  Data d;
  gather(m, op.getTensor(), op.getIndices(), op.getMask(), op.getOther(),
         op.getType(), d);
  m.setData(op.getResult(), std::move(d));
  return true;
}

bool execStore(Machine &m, tile::StoreOp op) {
  const RtValue &t = m.get(op.getTensor());
  const rt::Param &p = m.bundle.params[size_t(t.param)];
  if (p.access == rt::Access::Read)
    return m.fail(op, "stores into '" + p.name +
                          "', whose tile.access is \"read\"");
  rt::HostTensor &buf = m.tensors[size_t(t.param)];
  const Data &v = m.data(op.getValue());
  Addressing address(m, t, op.getIndices());
  const Data *on = op.getMask() ? &m.data(op.getMask()) : nullptr;
  int64_t n = int64_t(v.size());
  for (int64_t e = 0; e < n; ++e) {
    if (on && on->i[size_t(e)] == 0)
      continue;
    int64_t offset = address.offset(e);
    if (offset < 0)
      continue;
    if (v.isFloat)
      buf.set(offset, v.f[size_t(e)]);
    else
      writeInt(buf, offset, v.i[size_t(e)]);
  }
  return true;
}

/// f32 atomic max as the GPU computes it: the bits of a value with the sign
/// bit clear are combined by signed integer max, those of one with the sign
/// bit set by unsigned min (AtomicOpToNVVM.cpp). For numbers this is the
/// float maximum with -0 < +0; a NaN whose sign bit is clear wins over
/// every value, one whose sign bit is set loses to every value.
float atomicMaxF32(float memory, float value) {
  uint32_t m, v;
  std::memcpy(&m, &memory, 4);
  std::memcpy(&v, &value, 4);
  uint32_t r = int32_t(v) >= 0 ? uint32_t(std::max(int32_t(m), int32_t(v)))
                               : std::min(m, v);
  float result;
  std::memcpy(&result, &r, 4);
  return result;
}

/// Applies the elements in row-major order, each as one read-modify-write:
/// integer results do not depend on the order, float sums do (the GPU's
/// order is unspecified).
bool execAtomic(Machine &m, tile::AtomicRMWOp op) {
  const RtValue &t = m.get(op.getTensor());
  const rt::Param &p = m.bundle.params[size_t(t.param)];
  if (p.access == rt::Access::Read)
    return m.fail(op,
                  "updates '" + p.name + "', whose tile.access is \"read\"");
  rt::HostTensor &buf = m.tensors[size_t(t.param)];
  const Data &v = m.data(op.getValue());
  Type element = op.getValue().getType().getElementType();
  bool isAdd = op.getKind() == tile::AtomicKind::Add;
  Addressing address(m, t, op.getIndices());
  const Data *on = op.getMask() ? &m.data(op.getMask()) : nullptr;
  int64_t n = int64_t(v.size());
  for (int64_t e = 0; e < n; ++e) {
    if (on && on->i[size_t(e)] == 0)
      continue;
    int64_t offset = address.offset(e);
    if (offset < 0)
      continue;
    if (!v.isFloat) {
      int64_t old = readInt(buf, offset), x = v.i[size_t(e)];
      writeInt(buf, offset, wrapInt(isAdd ? old + x : std::max(old, x), 32));
    } else if (isAdd) {
      buf.set(offset,
              roundFloat(readFloat(buf, offset) + v.f[size_t(e)], element));
    } else {
      buf.set(offset, atomicMaxF32(float(readFloat(buf, offset)),
                                   float(v.f[size_t(e)])));
    }
  }
  return true;
}

// Pipelines: a FIFO of blocks per ring.

bool execPipelineCreate(Machine &m, tile::PipelineCreateOp op) {
  RtValue v;
  v.kind = RtValue::Pipeline;
  v.pipeline = int(m.rings.size());
  m.rings.emplace_back();
  m.ringStages.push_back(op.getType().getStages());
  m.set(op.getResult(), v);
  return true;
}

bool execPipelinePush(Machine &m, tile::PipelinePushOp op) {
  int ring = m.get(op.getPipeline()).pipeline;
  if (m.rings[size_t(ring)].size() >= m.ringStages[size_t(ring)])
    return m.fail(op, "a push with all " + Twine(m.ringStages[size_t(ring)]) +
                          " stages already outstanding");
  Data d;
  auto type = cast<tile::PipelineType>(op.getPipeline().getType());
  int64_t outside = gather(m, op.getTensor(), op.getIndices(), op.getMask(),
                           op.getOther(), type.getTileType(), d);
  // The GPU copies of an `inside` push have no bounds checks.
  if (op.getInside() && outside)
    return m.fail(op, "a push marked `inside` reads " + Twine(outside) +
                          " elements outside the tensor");
  m.rings[size_t(ring)].push_back(std::make_shared<const Data>(std::move(d)));
  return true;
}

bool execPipelinePop(Machine &m, tile::PipelinePopOp op) {
  auto &ring = m.rings[size_t(m.get(op.getPipeline()).pipeline)];
  if (ring.empty())
    return m.fail(op, "pop with no push outstanding");
  RtValue v;
  v.kind = RtValue::Numbers;
  v.data = ring.front();
  ring.pop_front();
  // A transposed pop reads the stage as tile.trans of the popped tile.
  if (op.getTranspose())
    v.data = std::make_shared<const Data>(transposeData(*v.data));
  m.set(op.getResult(), std::move(v));
  return true;
}

} // namespace

void registerMemoryOps(OpTable &table) {
  table.add<tile::MakeTensorOp>(execMakeTensor);
  table.add<tile::DimOp>(execDim);
  table.add<tile::LoadOp>(execLoad);
  table.add<tile::StoreOp>(execStore);
  table.add<tile::AtomicRMWOp>(execAtomic);
  table.add<tile::PipelineCreateOp>(execPipelineCreate);
  table.add<tile::PipelinePushOp>(execPipelinePush);
  table.add<tile::PipelinePopOp>(execPipelinePop);
}

} // namespace tegula::interp
