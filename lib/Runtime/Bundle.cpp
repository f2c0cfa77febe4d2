//===- Bundle.cpp - Compiled-kernel bundles -------------------------------===//

#include "tegula/Runtime/Bundle.h"

#include "tegula/Runtime/Chip.h"
#include "tegula/Runtime/File.h"
#include "tegula/Runtime/ImageCheck.h"
#include "tegula/Runtime/Text.h"
#include "tegula/Runtime/Tuning.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace tegula::rt {

using nlohmann::json;

const char *accessName(Access access) {
  switch (access) {
  case Access::Read:
    return "read";
  case Access::Write:
    return "write";
  case Access::ReadWrite:
    return "readwrite";
  }
  return "?";
}

const Param *Bundle::findParam(std::string_view name) const {
  auto it = paramIndex.find(name);
  return it == paramIndex.end() ? nullptr : &params[it->second];
}

bool Bundle::isSizeVar(std::string_view name) const {
  return sizeVarIndex.count(name) != 0;
}

int Bundle::findConfig(std::string_view name) const {
  for (size_t i = 0; i < configs.size(); ++i)
    if (configs[i].name == name)
      return int(i);
  return -1;
}

const std::string &Bundle::ptxOf(int config, int variant) const {
  const Config &c = configs[size_t(config)];
  return variant < 0 ? c.ptx : c.variants[size_t(variant)].ptx;
}

const std::string &Bundle::cubinOf(int config, int variant) const {
  const Config &c = configs[size_t(config)];
  return variant < 0 ? c.cubin : c.variants[size_t(variant)].cubin;
}

int64_t Bundle::sharedBytesOf(int config, int variant) const {
  const Config &c = configs[size_t(config)];
  return variant < 0 ? c.sharedBytes : c.variants[size_t(variant)].sharedBytes;
}

std::string Bundle::variantName(int config, int variant) const {
  return variant < 0 ? "general"
                     : configs[size_t(config)].variants[size_t(variant)].name;
}

std::string Bundle::configName(int config) const {
  return listsConfigs ? configs[size_t(config)].name : "default";
}

std::vector<unsigned> Bundle::abiParamBits() const {
  std::vector<unsigned> bits;
  for (const Param &p : params) {
    if (p.isTensor || p.dtype == DType::I64)
      bits.push_back(64);
    else
      bits.push_back(32);
  }
  bits.insert(bits.end(), sizeVars.size(), 32);
  for (const Param &p : params)
    if (p.strided)
      bits.insert(bits.end(), p.dims.size(), 64);
  return bits;
}

namespace {
bool isIdentifier(const std::string &s) {
  if (s.empty() || !(std::isalpha((unsigned char)s[0]) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum((unsigned char)c) || c == '_'))
      return false;
  return true;
}

/// nlohmann reads integers over INT64_MAX as unsigned.
bool fitsInt64(const json &value) {
  return !value.is_number_unsigned() ||
         value.get<uint64_t>() <= uint64_t(INT64_MAX);
}

/// Collects the first problem found; later ones are ignored.
struct Validator {
  std::string prefix;
  std::string error;

  bool fail(const std::string &message) {
    if (error.empty())
      error = prefix + message;
    return false;
  }

  bool getString(const json &obj, const char *key, std::string &out,
                 bool required = true) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null())
      return !required || fail(std::string("missing field '") + key + "'");
    if (!it->is_string())
      return fail(std::string("field '") + key + "' must be a string");
    out = it->get<std::string>();
    return true;
  }

  bool getInt(const json &obj, const char *key, int64_t &out) {
    auto it = obj.find(key);
    if (it == obj.end())
      return fail(std::string("missing field '") + key + "'");
    if (!it->is_number_integer())
      return fail(std::string("field '") + key + "' must be an integer");
    if (!fitsInt64(*it))
      return fail(std::string("field '") + key + "' does not fit in 64 bits");
    out = it->get<int64_t>();
    return true;
  }

  /// An expression field: a string or an integer.
  bool getExpr(const json &value, const std::string &what, Expr &out) {
    std::string text;
    if (value.is_number_integer() && !fitsInt64(value))
      return fail(what + " does not fit in 64 bits");
    if (value.is_number_integer())
      text = std::to_string(value.get<int64_t>());
    else if (value.is_string())
      text = value.get<std::string>();
    else
      return fail(what + " must be a string or an integer");
    std::string err;
    if (!Expr::parse(text, out, err))
      return fail(what + ": " + err);
    return true;
  }
};
} // namespace

bool parseUserJson(const std::string &text, json &value, std::string &error) {
  // Copying, printing and comparing a parsed value recurse through its
  // nesting, so the depth is bounded before nlohmann sees the text.
  constexpr unsigned kMaxDepth = 64;
  unsigned depth = 0, line = 1;
  size_t lineStart = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      lineStart = i + 1;
    }
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) {
        error = "invalid JSON: arrays and objects nested more than " +
                std::to_string(kMaxDepth) + " deep at line " +
                std::to_string(line) + ", column " +
                std::to_string(i - lineStart + 1);
        return false;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  try {
    value = json::parse(text);
  } catch (const json::exception &e) {
    error = std::string("invalid JSON: ") + e.what();
    return false;
  }
  return true;
}

namespace {
/// A file named by a bundle field sits beside KERNEL.json, never elsewhere.
bool isPlainFileName(const std::string &name) {
  return !name.empty() && name[0] != '.' &&
         name.find_first_of("/\\") == std::string::npos;
}

/// grid, requires, flops, bytes and `when` may use size variables and
/// integer scalars; `when` also a strided tensor's stride(x, d) and
/// align(x) (`views`).
void checkNames(const Bundle &b, Validator &v, const Expr &e,
                const std::string &what, bool views = false) {
  for (const std::string &n : e.names()) {
    const Param *p = b.findParam(n);
    if (b.isSizeVar(n) || (p && !p->isTensor && p->dtype != DType::F32))
      continue;
    std::string tensor;
    int64_t dim;
    if (parseViewName(n, tensor, dim)) {
      const Param *t = b.findParam(tensor);
      if (views && t && t->isTensor && t->strided &&
          dim < int64_t(t->dims.size()))
        continue;
      v.fail(what + " '" + abbreviate(e.text()) + "' uses '" + abbreviate(n) +
             "'" +
             (!views ? ": only a variant's conditions name a view's values"
              : !t || !t->isTensor || !t->strided
                  ? ", but '" + abbreviate(tensor) +
                        "' is not a strided tensor parameter"
                  : ", but '" + tensor + "' has " +
                        std::to_string(t->dims.size()) + " dimensions"));
      continue;
    }
    v.fail(what + " '" + abbreviate(e.text()) + "' uses '" + abbreviate(n) +
           "', which is neither a size variable nor an integer scalar "
           "parameter");
  }
}

/// An optional file-name field ("cubin", a config's "ptx").
void getFileName(Validator &v, const json &obj, const char *key,
                 const std::string &where, std::string &out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null())
    return;
  if (!it->is_string() || !isPlainFileName(it->get<std::string>())) {
    v.fail(where + "'" + key + "' must name a file beside the bundle");
    return;
  }
  out = it->get<std::string>();
}

/// The optional ptxas figures ("registers", "spill_bytes",
/// "spill_load_bytes"; bundles before the last have none).
void getStats(Validator &v, const json &obj, const std::string &where,
              std::optional<int64_t> &registers,
              std::optional<int64_t> &spillBytes,
              std::optional<int64_t> &spillLoadBytes) {
  for (auto [key, out] : {std::pair{"registers", &registers},
                          std::pair{"spill_bytes", &spillBytes},
                          std::pair{"spill_load_bytes", &spillLoadBytes}}) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null())
      continue;
    if (!it->is_number_integer() || !fitsInt64(*it) || it->get<int64_t>() < 0)
      v.fail(where + "'" + key + "' must be a non-negative integer");
    else
      *out = it->get<int64_t>();
  }
}

/// What a config holds: the top level's fields for configs[0] of a bundle
/// without "configs", else one entry of "configs" (`where` prefixes
/// messages: "" or "configs[1] ").
void parseCode(const Bundle &b, Validator &v, const json &obj,
               const std::string &where, Config &c) {
  Validator local{"", ""};
  local.getInt(obj, "threads", c.threads);
  local.getInt(obj, "shared_bytes", c.sharedBytes);
  if (!local.error.empty()) {
    v.fail(where + local.error);
    return;
  }
  if (c.threads < 1 || c.threads > 1024)
    v.fail(where + "threads must be in [1, 1024], got " +
           std::to_string(c.threads));
  if (c.sharedBytes < 0 || c.sharedBytes > (int64_t(1) << 30))
    v.fail(where +
           "shared_bytes out of range: " + std::to_string(c.sharedBytes));
  getFileName(v, obj, "cubin", where, c.cubinPath);
  getStats(v, obj, where, c.registers, c.spillBytes, c.spillLoadBytes);
  auto grid = obj.find("grid");
  if (grid == obj.end() || !grid->is_array() || grid->size() != 3) {
    v.fail(where + "'grid' must be an array of 3 expressions");
  } else {
    for (size_t i = 0; i < 3; ++i) {
      std::string what = where + "grid[" + std::to_string(i) + "]";
      if (v.getExpr((*grid)[i], what, c.grid[i]))
        checkNames(b, v, c.grid[i], what);
    }
  }
  auto list = obj.find("variants");
  if (list == obj.end() || list->is_null())
    return;
  if (!list->is_array() || list->size() > 64) {
    v.fail(where + "'variants' must be an array of at most 64 objects");
    return;
  }
  for (size_t i = 0; i < list->size(); ++i) {
    const json &item = (*list)[i];
    std::string what = where + "variants[" + std::to_string(i) + "]";
    if (!item.is_object()) {
      v.fail(what + " must be an object");
      continue;
    }
    Variant variant;
    v.getString(item, "name", variant.name);
    v.getString(item, "ptx", variant.ptxPath);
    v.getInt(item, "shared_bytes", variant.sharedBytes);
    if (!isIdentifier(variant.name))
      v.fail(what + " name '" + abbreviate(variant.name) +
             "' is not an identifier");
    if (!isPlainFileName(variant.ptxPath))
      v.fail(what + " ptx '" + abbreviate(variant.ptxPath) +
             "' must name a file beside the bundle");
    if (variant.sharedBytes < 0 || variant.sharedBytes > (int64_t(1) << 30))
      v.fail(what + " shared_bytes out of range");
    getFileName(v, item, "cubin", what + " ", variant.cubinPath);
    getStats(v, item, what + " ", variant.registers, variant.spillBytes,
             variant.spillLoadBytes);
    auto when = item.find("when");
    if (when == item.end() || !when->is_array() || when->size() > 64) {
      v.fail(what + " 'when' must be an array of at most 64 expressions");
    } else {
      for (size_t w = 0; w < when->size(); ++w) {
        Expr e;
        std::string whenWhat = what + " when[" + std::to_string(w) + "]";
        if (v.getExpr((*when)[w], whenWhat, e))
          checkNames(b, v, e, whenWhat, /*views=*/true);
        variant.when.push_back(std::move(e));
      }
    }
    c.variants.push_back(std::move(variant));
  }
}

/// The "configs" field: named configs with their own PTX files; the top
/// level must describe the first, so that launchers ignoring the field run
/// it.
void parseConfigs(Bundle &b, Validator &v, const json &root, const json &list) {
  if (!list.is_array() || list.empty() || list.size() > 4096) {
    v.fail("'configs' must be an array of 1 to 4096 objects");
    return;
  }
  Config top = std::move(b.configs[0]);
  b.configs.clear();
  for (size_t i = 0; i < list.size() && v.error.empty(); ++i) {
    const json &item = list[i];
    std::string where = "configs[" + std::to_string(i) + "] ";
    if (!item.is_object()) {
      v.fail(where + "must be an object");
      return;
    }
    Config c;
    Validator local{"", ""};
    local.getString(item, "name", c.name);
    local.getString(item, "ptx", c.ptxPath);
    if (!local.error.empty())
      v.fail(where + local.error);
    else if (c.name.empty() || c.name.find_first_of(";\n") != std::string::npos)
      v.fail(where + "name '" + abbreviate(c.name) +
             "' must be non-empty, without ';'");
    else if (b.findConfig(c.name) >= 0)
      v.fail(where + "name '" + abbreviate(c.name) + "' is used twice");
    else if (!isPlainFileName(c.ptxPath))
      v.fail(where + "'ptx' must name a file beside the bundle");
    if (auto d = item.find("defines"); d != item.end() && !d->is_null()) {
      if (!d->is_object())
        v.fail(where + "'defines' must be an object");
      else
        c.defines = *d;
    }
    parseCode(b, v, item, where, c);
    b.configs.push_back(std::move(c));
  }
  if (!v.error.empty())
    return;
  const Config &first = b.configs[0];
  bool same = top.threads == first.threads &&
              top.sharedBytes == first.sharedBytes &&
              top.variants.size() == first.variants.size();
  for (size_t d = 0; d < 3; ++d)
    same = same && top.grid[d].text() == first.grid[d].text();
  if (!same)
    v.fail("the top level (threads, shared_bytes, grid, variants) must "
           "describe configs[0] '" +
           abbreviate(first.name) + "'");
  (void)root;
}
} // namespace

bool parseBundleJson(const std::string &text, const std::string &jsonPath,
                     Bundle &bundle, std::string &error) {
  Validator v{"bundle '" + jsonPath + "': ", ""};
  json root;
  if (!parseUserJson(text, root, error)) {
    error = v.prefix + error;
    return false;
  }
  if (!root.is_object()) {
    error = v.prefix + "the top level must be an object";
    return false;
  }
  Bundle b;
  b.jsonPath = jsonPath;
  v.getString(root, "kernel", b.kernel);
  b.entry = b.kernel;
  v.getString(root, "entry", b.entry, /*required=*/false);
  v.getString(root, "target", b.target);
  Config top;
  v.getInt(root, "threads", top.threads);
  v.getInt(root, "shared_bytes", top.sharedBytes);
  if (!v.error.empty()) {
    error = v.error;
    return false;
  }
  if (!parseChipName(b.target))
    v.fail("target '" + b.target + "' is not of the form sm_XY");

  if (auto it = root.find("template"); it != root.end() && !it->is_null()) {
    if (!it->is_object())
      v.fail("field 'template' must be an object");
    else
      b.templateParams = *it;
  }
  if (auto it = root.find("reference"); it != root.end() && !it->is_null()) {
    if (it->is_string())
      b.reference = json{{"name", *it}};
    else if (it->is_object() && it->contains("name") &&
             (*it)["name"].is_string())
      b.reference = *it;
    else
      v.fail("field 'reference' must be a name or an object with a string "
             "'name'");
  }
  getFileName(v, root, "tuning", "", b.tuningPath);

  auto sizeVars = root.find("size_vars");
  if (sizeVars == root.end() || !sizeVars->is_array()) {
    v.fail("missing array field 'size_vars'");
  } else {
    for (const json &s : *sizeVars) {
      if (!s.is_string() || !isIdentifier(s.get<std::string>())) {
        v.fail("size_vars entries must be identifiers, got " + s.dump());
        break;
      }
      if (!b.sizeVarIndex.emplace(s.get<std::string>(), b.sizeVars.size())
               .second)
        v.fail("size variable '" + s.get<std::string>() + "' listed twice");
      b.sizeVars.push_back(s.get<std::string>());
    }
  }

  auto params = root.find("params");
  if (params == root.end() || !params->is_array()) {
    v.fail("missing array field 'params'");
    error = v.error;
    return false;
  }
  auto addParam = [&](Param p) {
    b.paramIndex.emplace(p.name, b.params.size());
    b.params.push_back(std::move(p));
  };
  for (size_t i = 0; i < params->size() && v.error.empty(); ++i) {
    const json &pj = (*params)[i];
    std::string where = "params[" + std::to_string(i) + "]";
    if (!pj.is_object()) {
      v.fail(where + " must be an object");
      break;
    }
    Param p;
    std::string kind, dtype, access;
    if (!v.getString(pj, "name", p.name) || !v.getString(pj, "kind", kind) ||
        !v.getString(pj, "dtype", dtype))
      break;
    where = "parameter '" + p.name + "'";
    if (!isIdentifier(p.name) || b.isSizeVar(p.name) || b.findParam(p.name)) {
      v.fail(where + ": the name is not an identifier or is used twice");
      break;
    }
    auto type = parseDType(dtype);
    if (!type) {
      v.fail(where + ": unknown dtype '" + dtype +
             "' (expected f16, bf16, f32, i32, i64 or bool)");
      break;
    }
    p.dtype = *type;
    if (kind == "scalar") {
      if (p.dtype == DType::F16 || p.dtype == DType::BF16)
        v.fail(where + ": scalar parameters are i32, i64, f32 or bool");
      addParam(std::move(p));
      continue;
    }
    if (kind != "tensor") {
      v.fail(where + ": kind must be 'tensor' or 'scalar', got '" + kind + "'");
      break;
    }
    p.isTensor = true;
    if (auto strided = pj.find("strided"); strided != pj.end()) {
      if (!strided->is_boolean())
        v.fail(where + ": 'strided' must be true or false");
      else
        p.strided = strided->get<bool>();
    }
    v.getString(pj, "access", access);
    if (access == "read")
      p.access = Access::Read;
    else if (access == "write")
      p.access = Access::Write;
    else if (access == "readwrite")
      p.access = Access::ReadWrite;
    else
      v.fail(where + ": access must be read, write or readwrite, got '" +
             access + "'");
    auto dims = pj.find("dims");
    if (dims == pj.end() || !dims->is_array() || dims->empty()) {
      v.fail(where + ": 'dims' must be a non-empty array");
      break;
    }
    for (size_t d = 0; d < dims->size(); ++d) {
      Expr e;
      if (!v.getExpr((*dims)[d], where + " dims[" + std::to_string(d) + "]", e))
        break;
      for (const std::string &n : e.names())
        if (!b.isSizeVar(n))
          v.fail(where + " dims[" + std::to_string(d) + "] '" +
                 abbreviate(e.text()) + "' uses '" + abbreviate(n) +
                 "', which is not in size_vars");
      p.dims.push_back(std::move(e));
    }
    addParam(std::move(p));
  }

  if (auto req = root.find("requires"); req != root.end() && !req->is_null()) {
    if (!req->is_array())
      v.fail("'requires' must be an array of expressions");
    else
      for (size_t i = 0; i < req->size(); ++i) {
        Expr e;
        std::string what = "requires[" + std::to_string(i) + "]";
        if (v.getExpr((*req)[i], what, e))
          checkNames(b, v, e, what);
        b.requires_.push_back(std::move(e));
      }
  }
  for (const char *key : {"flops", "bytes"}) {
    auto it = root.find(key);
    if (it == root.end() || it->is_null())
      continue;
    Expr e;
    if (v.getExpr(*it, key, e))
      checkNames(b, v, e, key);
    (std::string(key) == "flops" ? b.flops : b.bytes) = std::move(e);
  }
  parseCode(b, v, root, "", top);
  b.configs.push_back(std::move(top));
  if (auto list = root.find("configs");
      list != root.end() && !list->is_null()) {
    b.listsConfigs = true;
    if (v.error.empty())
      parseConfigs(b, v, root, *list);
  }

  if (!v.error.empty()) {
    error = v.error;
    return false;
  }
  bundle = std::move(b);
  return true;
}

namespace {
/// The decimal digits of `text` from `at`, saturating at 2^20 (a PTX
/// parameter list has at most 32 KB); no digits read as 0.
uint64_t parseCount(const std::string &text, size_t at) {
  uint64_t value = 0;
  for (; at < text.size() && std::isdigit((unsigned char)text[at]); ++at)
    value = std::min<uint64_t>(value * 10 + uint64_t(text[at] - '0'), 1 << 20);
  return value;
}
} // namespace

bool ptxEntryParams(const std::string &ptx, const std::string &entry,
                    std::vector<unsigned> &bits, size_t *paramsEnd) {
  size_t at = 0;
  for (;;) {
    at = ptx.find(".entry", at);
    if (at == std::string::npos)
      return false;
    at += 6;
    size_t nameStart = ptx.find_first_not_of(" \t\r\n", at);
    if (nameStart == std::string::npos)
      return false;
    if (ptx.compare(nameStart, entry.size(), entry) != 0)
      continue;
    size_t after = ptx.find_first_not_of(" \t\r\n", nameStart + entry.size());
    if (after != std::string::npos && ptx[after] == '(') {
      at = after + 1;
      break;
    }
  }
  size_t close = ptx.find(')', at);
  if (close == std::string::npos)
    return false;
  if (paramsEnd)
    *paramsEnd = close + 1;
  bits.clear();
  std::stringstream list(ptx.substr(at, close - at));
  std::string item;
  while (std::getline(list, item, ',')) {
    std::stringstream tokens(item);
    std::string tok, type, name;
    while (tokens >> tok) {
      if (tok == ".param" || tok == ".ptr" || tok == ".global" ||
          tok == ".const" || tok == ".shared" || tok == ".local")
        continue;
      if (tok == ".align") {
        tokens >> tok;
        continue;
      }
      if (type.empty() && tok.size() >= 3 && tok[0] == '.' &&
          std::string("bsuf").find(tok[1]) != std::string::npos &&
          std::isdigit((unsigned char)tok[2])) {
        type = tok;
        continue;
      }
      name = tok;
    }
    if (type.empty())
      continue; // Whitespace after the last comma.
    // An array parameter (`.b8 name[16]`) is its element times its length.
    uint64_t width = parseCount(type, 2);
    size_t bracket = name.find('[');
    if (bracket != std::string::npos)
      width *= parseCount(name, bracket + 1);
    bits.push_back(unsigned(width));
  }
  return true;
}

namespace {
std::string formatBits(const std::vector<unsigned> &bits) {
  std::vector<std::string> items;
  for (unsigned b : bits)
    items.push_back(std::to_string(b));
  return "(" + joinList(items) + ")";
}
} // namespace

namespace {
std::string directoryOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

/// Reads a cubin named by the bundle: present and an ELF image.
bool readCubin(const std::string &jsonPath, std::string &path,
               std::string &bytes, std::string &error) {
  if (path.empty())
    return true;
  path = directoryOf(jsonPath) + path;
  std::string reason;
  if (!readFile(path, bytes, reason)) {
    error = "bundle '" + jsonPath + "': cannot open the cubin '" + path +
            "': " + reason;
    return false;
  }
  if (bytes.compare(0, 4,
                    "\x7f"
                    "ELF") != 0) {
    error = "bundle '" + jsonPath + "': the cubin '" + path +
            "' is not an ELF file";
    bytes.clear();
    return false;
  }
  // The driver trusts the headers; a cut file would be read past its end.
  std::string why;
  if (!checkElfImage(bytes, why)) {
    error = "bundle '" + jsonPath + "': the cubin '" + path + "' " + why;
    bytes.clear();
    return false;
  }
  return true;
}

} // namespace

bool loadBundle(const std::string &jsonPath, Bundle &bundle,
                std::string &error) {
  std::string text, reason;
  if (!readFile(jsonPath, text, reason)) {
    error = "cannot open bundle '" + jsonPath + "': " + reason;
    return false;
  }
  if (!parseBundleJson(text, jsonPath, bundle, error))
    return false;

  // KERNEL.ptx sits beside KERNEL.json; launchers that ignore "configs"
  // run it, so it is read even then.
  std::string base = jsonPath;
  if (base.size() > 5 && base.compare(base.size() - 5, 5, ".json") == 0)
    base.resize(base.size() - 5);
  std::string topPtx = base + ".ptx", topText;
  if (!readFile(topPtx, topText, reason)) {
    error = "bundle '" + jsonPath + "': cannot open the PTX '" + topPtx +
            "': " + reason;
    return false;
  }

  // Every other file sits beside it too, with the same entry and ABI.
  std::string directory = directoryOf(jsonPath);
  std::vector<unsigned> expected = bundle.abiParamBits();
  for (size_t c = 0; c < bundle.configs.size(); ++c) {
    Config &config = bundle.configs[c];
    std::string ofConfig = bundle.listsConfigs
                               ? " of config '" + abbreviate(config.name) + "'"
                               : std::string();
    if (!bundle.listsConfigs) {
      config.ptxPath = topPtx;
      config.ptx = std::move(topText);
    } else {
      config.ptxPath = directory + config.ptxPath;
      if (config.ptxPath == topPtx) {
        config.ptx = topText;
      } else if (!readFile(config.ptxPath, config.ptx, reason)) {
        error = "bundle '" + jsonPath + "': cannot open the PTX '" +
                config.ptxPath + "'" + ofConfig + ": " + reason;
        return false;
      }
      if (c == 0 && config.ptx != topText) {
        error = "bundle '" + jsonPath + "': '" + topPtx +
                "' must hold the PTX of configs[0] '" +
                abbreviate(config.name) + "'";
        return false;
      }
    }
    config.ptxSha256 = sha256Hex(config.ptx);
    if (!readCubin(jsonPath, config.cubinPath, config.cubin, error))
      return false;
    for (Variant &variant : config.variants) {
      variant.ptxPath = directory + variant.ptxPath;
      if (!readFile(variant.ptxPath, variant.ptx, reason)) {
        error = "bundle '" + jsonPath + "': cannot open the PTX '" +
                variant.ptxPath + "' of variant '" + variant.name + "'" +
                ofConfig + ": " + reason;
        return false;
      }
      if (!readCubin(jsonPath, variant.cubinPath, variant.cubin, error))
        return false;
    }
    for (int i = -1; i < int(config.variants.size()); ++i) {
      const std::string &path =
          i < 0 ? config.ptxPath : config.variants[size_t(i)].ptxPath;
      // Commented-out text is no code: a `.entry` in a comment is none.
      std::string code = stripPtxComments(bundle.ptxOf(int(c), i));
      std::vector<unsigned> bits;
      size_t paramsEnd = 0;
      if (!ptxEntryParams(code, bundle.entry, bits, &paramsEnd)) {
        error = "bundle '" + jsonPath + "': '" + path + "' has no .entry '" +
                bundle.entry + "'";
        return false;
      }
      if (!ptxEntryBodyCloses(code, paramsEnd)) {
        error = "bundle '" + jsonPath + "': '" + path +
                "' is truncated: the body of .entry '" + bundle.entry +
                "' does not close";
        return false;
      }
      int64_t declared = ptxStaticSharedBytes(code);
      if (declared > bundle.sharedBytesOf(int(c), i)) {
        error = "bundle '" + jsonPath + "': '" + path + "' declares " +
                std::to_string(declared) +
                " bytes of shared memory but shared_bytes" +
                (i < 0 ? std::string() : " of its variant") + " is " +
                std::to_string(bundle.sharedBytesOf(int(c), i));
        return false;
      }
      if (bits != expected) {
        std::string which =
            i < 0 ? std::string()
                  : " of variant '" + config.variants[size_t(i)].name + "'";
        error = "bundle '" + jsonPath + "': the PTX entry '" + bundle.entry +
                "'" + which + ofConfig + " takes parameters of " +
                formatBits(bits) + " bits but KERNEL.json describes " +
                formatBits(expected) +
                " (tensors 64, i32/bool/f32 32, i64 64, then one 32 per size "
                "variable)";
        return false;
      }
    }
  }
  return loadTuningTable(bundle, error);
}

} // namespace tegula::rt
