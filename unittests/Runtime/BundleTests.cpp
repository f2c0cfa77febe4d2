//===- BundleTests.cpp - The bundle writer against its reader -------------===//
//
// A round trip of every field of a bundle (write, read, compare, write
// again: the same bytes) and the target names and facts of Chip.h.
//
//===----------------------------------------------------------------------===//

#include "UnitTest.h"

#include "tegula/Runtime/Bundle.h"
#include "tegula/Runtime/Chip.h"
#include "tegula/Runtime/Expr.h"
#include "tegula/Runtime/LoadedKernel.h"

using namespace tegula::rt;

namespace {
bool sameTexts(const std::vector<Expr> &a, const std::vector<Expr> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].text() != b[i].text())
      return false;
  return true;
}

bool sameText(const std::optional<Expr> &a, const std::optional<Expr> &b) {
  return a.has_value() == b.has_value() && (!a || a->text() == b->text());
}

Expr expr(const char *text) {
  Expr e;
  std::string error;
  EXPECT(Expr::parse(text, e, error));
  return e;
}

/// Compares every field KERNEL.json holds; the PTX and cubin bytes, their
/// hash and the tuning entries come from files (loadBundle).
void expectSameVariant(const Variant &a, const Variant &b) {
  EXPECT(a.name == b.name && a.ptxPath == b.ptxPath &&
         a.cubinPath == b.cubinPath && sameTexts(a.when, b.when) &&
         a.sharedBytes == b.sharedBytes && a.registers == b.registers &&
         a.spillBytes == b.spillBytes && a.spillLoadBytes == b.spillLoadBytes);
}

void expectSameConfig(const Config &a, const Config &b) {
  EXPECT(a.name == b.name && a.defines == b.defines && a.ptxPath == b.ptxPath &&
         a.cubinPath == b.cubinPath && a.threads == b.threads &&
         a.sharedBytes == b.sharedBytes && a.registers == b.registers &&
         a.spillBytes == b.spillBytes && a.spillLoadBytes == b.spillLoadBytes);
  for (size_t d = 0; d < 3; ++d)
    EXPECT(a.grid[d].text() == b.grid[d].text());
  EXPECT(a.variants.size() == b.variants.size());
  for (size_t i = 0; i < a.variants.size() && i < b.variants.size(); ++i)
    expectSameVariant(a.variants[i], b.variants[i]);
}

void expectSameBundle(const Bundle &a, const Bundle &b) {
  EXPECT(a.kernel == b.kernel && a.entry == b.entry && a.target == b.target);
  EXPECT(a.templateParams == b.templateParams && a.reference == b.reference);
  EXPECT(a.sizeVars == b.sizeVars && sameTexts(a.requires_, b.requires_));
  EXPECT(sameText(a.flops, b.flops) && sameText(a.bytes, b.bytes));
  EXPECT(a.listsConfigs == b.listsConfigs && a.tuningPath == b.tuningPath);
  EXPECT(a.params.size() == b.params.size());
  for (size_t i = 0; i < a.params.size() && i < b.params.size(); ++i) {
    const Param &p = a.params[i], &q = b.params[i];
    EXPECT(p.name == q.name && p.isTensor == q.isTensor && p.dtype == q.dtype &&
           p.access == q.access && sameTexts(p.dims, q.dims) &&
           p.strided == q.strided);
  }
  EXPECT(a.configs.size() == b.configs.size());
  for (size_t i = 0; i < a.configs.size() && i < b.configs.size(); ++i)
    expectSameConfig(a.configs[i], b.configs[i]);
}

/// Config `index` of the round-trip bundle: every field set, no two alike.
Config roundTripConfig(int index) {
  Config c;
  c.name = "BLOCK=" + std::to_string(64 << index);
  c.defines = {{"BLOCK", 64 << index}};
  c.ptxPath = index == 0 ? "rt.ptx" : "rt.c" + std::to_string(index) + ".ptx";
  c.cubinPath = "rt.c" + std::to_string(index) + ".cubin";
  c.grid = {expr("cdiv(M, 64)"), expr("N / 2"), expr(index ? "3" : "2")};
  c.threads = 128 << index;
  c.sharedBytes = 4096 + index;
  c.registers = 90 + index;
  c.spillBytes = 8 + index;
  c.spillLoadBytes = 12 + index;
  Variant v;
  v.name = "div16";
  v.ptxPath = "rt.div16." + std::to_string(index) + ".ptx";
  v.cubinPath = "rt.div16." + std::to_string(index) + ".cubin";
  v.when = {expr("M % 16 == 0"), expr("N % 16 == 0")};
  v.sharedBytes = 2048 + index;
  v.registers = 70 + index;
  v.spillBytes = index;
  v.spillLoadBytes = 4 + index;
  c.variants = {v};
  return c;
}

Param param(const char *name, bool isTensor, DType dtype, Access access,
            std::vector<Expr> dims, bool strided) {
  Param p;
  p.name = name;
  p.isTensor = isTensor;
  p.dtype = dtype;
  p.access = access;
  p.dims = std::move(dims);
  p.strided = strided;
  return p;
}
} // namespace

/// The one writer and the one reader agree: a bundle written, read back
/// and written again comes back field for field and byte for byte.
void tegula::unittest::testBundleRoundTrip() {
  Bundle b;
  b.kernel = "rt";
  b.entry = "rt_entry";
  b.target = "sm_90a";
  b.templateParams = {{"BLOCK", 64}, {"CAUSAL", true}, {"DT", "f16"}};
  b.reference = {{"name", "matmul"}, {"tensors", {{"a", "b"}}}};
  b.sizeVars = {"M", "N"};
  b.params = {
      param("a", true, DType::F16, Access::Read, {expr("64"), expr("N")}, true),
      param("b", true, DType::BF16, Access::Write, {expr("M"), expr("N")},
            false),
      param("c", true, DType::I64, Access::ReadWrite, {expr("M")}, false),
      param("s", false, DType::I32, Access::Read, {}, false),
      param("f", false, DType::F32, Access::Read, {}, false),
      param("flag", false, DType::Bool, Access::Read, {}, false)};
  b.requires_ = {expr("M % 16 == 0"), expr("s > 0")};
  b.flops = expr("2 * M * N");
  b.bytes = expr("M * N * 4");
  b.configs = {roundTripConfig(0), roundTripConfig(1)};
  b.listsConfigs = true;
  b.tuningPath = "rt.tuning.json";
  std::string text = writeBundleJson(b), error;
  Bundle read;
  EXPECT(parseBundleJson(text, "rt.json", read, error));
  expectSameBundle(b, read);
  EXPECT(read.findParam("flag") && read.isSizeVar("N"));
  EXPECT(writeBundleJson(read) == text);

  // Without configs: the top level is the one config, ptxas figures and
  // all; a reference that is only a name is written as the name.
  Bundle single = b;
  single.configs = {roundTripConfig(0)};
  single.configs[0].name.clear();
  single.configs[0].defines = nlohmann::json::object();
  single.configs[0].ptxPath.clear();
  single.listsConfigs = false;
  single.tuningPath.clear();
  single.reference = {{"name", "matmul"}};
  single.requires_.clear();
  single.flops.reset();
  text = writeBundleJson(single);
  EXPECT(text.find("\"reference\": \"matmul\"") != std::string::npos &&
         text.find("\"flops\": null") != std::string::npos);
  EXPECT(parseBundleJson(text, "rt.json", read, error));
  expectSameBundle(single, read);
  EXPECT(writeBundleJson(read) == text);
}

/// Target names and the supported chips' facts (Chip.h).
void tegula::unittest::testChips() {
  std::optional<tegula::ChipName> chip = tegula::parseChipName("sm_90a");
  EXPECT(chip && chip->number == 90 && chip->suffix == "a");
  EXPECT(chip->runsOn(9, 0) && !chip->runsOn(10, 0) && !chip->runsOn(8, 0));
  EXPECT(chip->cubinRunsOn(9, 0) && !chip->cubinRunsOn(8, 9));
  chip = tegula::parseChipName("sm_80");
  EXPECT(chip && chip->number == 80 && chip->suffix.empty());
  EXPECT(chip->runsOn(8, 0) && chip->runsOn(9, 0) && !chip->runsOn(7, 5));
  chip = tegula::parseChipName("sm_100f");
  EXPECT(chip && chip->number == 100 && chip->suffix == "f");
  EXPECT(chip->runsOn(10, 3) && !chip->runsOn(11, 0) && !chip->runsOn(9, 0));
  for (const char *bad : {"sm_9", "sm_x0", "gfx90", "", "sm_"})
    EXPECT(!tegula::parseChipName(bad));
  EXPECT(tegula::parseChipName("sm_99999999999")->number == (1 << 20));
  for (const tegula::ChipFacts &facts : tegula::kSupportedChips) {
    chip = tegula::parseChipName(facts.name);
    EXPECT(chip && chip->number == facts.smNumber);
    EXPECT(tegula::findChip(facts.name) == &facts);
    // wgmma is sm_90a's alone; TMA and bf16 atomics come with sm_90.
    EXPECT(facts.hasWgmma == (chip->number == 90 && chip->suffix == "a"));
    EXPECT(facts.hasTma == (facts.smNumber >= 90) &&
           facts.hasBf16Atomics == (facts.smNumber >= 90));
  }
  EXPECT(!tegula::findChip("sm_75"));
  std::string error;
  EXPECT(!targetRunsOn("sm_90a", 8, 0, error) &&
         error == "the bundle targets sm_90a but the GPU is sm_80");
  EXPECT(targetRunsOn("sm_80", 9, 0, error) && cubinRunsOn("sm_90a", 9, 0));
}
