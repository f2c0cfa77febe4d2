//===- Sweep.cpp - The configs the -D options make ------------------------===//

#include "Driver.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace tegula;
using namespace tegula::tilec;

namespace {
/// The message for `-D NAME` given again with `value`: the one -D to write
/// instead, its values in the order given, each once.
std::string repeatedDefine(const std::string &name,
                           const std::vector<std::string> &values,
                           const std::string &value) {
  std::vector<std::string> merged = values;
  llvm::SmallVector<llvm::StringRef> items;
  llvm::StringRef(value).split(items, ',');
  for (llvm::StringRef item : items)
    if (!item.trim().empty() && !llvm::is_contained(merged, item.trim().str()))
      merged.push_back(item.trim().str());
  return "-D " + name + " is given twice; give it once" +
         (merged.size() > 1 ? ", with a comma list to sweep it" : "") +
         " (-D " + name + "=" + llvm::join(merged, ",") + ")";
}

/// The values of one -D NAME=V1,V2,...; false after a message.
bool parseValues(const std::string &define, const std::string &name,
                 std::vector<std::string> &values) {
  llvm::SmallVector<llvm::StringRef> items;
  llvm::StringRef(define).drop_front(name.size() + 1).split(items, ',');
  for (llvm::StringRef item : items) {
    if (item.trim().empty())
      return fail("-D " + name + ": an empty value in '" + define + "'"), false;
    if (llvm::is_contained(values, item.trim().str()))
      return fail("-D " + name + " lists '" + item.trim() + "' twice"), false;
    values.push_back(item.trim().str());
  }
  return true;
}
} // namespace

bool tilec::parseSweep(const std::vector<std::string> &defines, Sweep &sweep) {
  for (const std::string &d : defines) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0)
      return fail("-D expects NAME=VALUE, got '" + d + "'"), false;
    std::string name = d.substr(0, eq);
    // The frontend would keep the last value while a sweep names the first.
    for (const auto &[given, values] : sweep)
      if (given == name)
        return fail(repeatedDefine(name, values, d.substr(eq + 1))), false;
    std::vector<std::string> values;
    if (!parseValues(d, name, values))
      return false;
    sweep.emplace_back(name, values);
  }
  size_t combinations = 1;
  for (const auto &[name, values] : sweep) {
    combinations *= values.size();
    if (combinations > 4096)
      return fail("the -D lists make more than 4096 configs"), false;
  }
  return true;
}

size_t tilec::configCount(const Sweep &sweep) {
  size_t count = 1;
  for (const auto &entry : sweep)
    count *= entry.second.size();
  return count;
}

std::vector<std::pair<std::string, std::string>>
tilec::configDefines(const Sweep &sweep, size_t index) {
  std::vector<std::pair<std::string, std::string>> defines(sweep.size());
  for (size_t i = sweep.size(); i-- > 0;) {
    const auto &[name, values] = sweep[i];
    defines[i] = {name, values[index % values.size()]};
    index /= values.size();
  }
  return defines;
}

std::string tilec::configName(const Sweep &sweep, size_t index) {
  std::string name;
  auto defines = configDefines(sweep, index);
  for (size_t i = 0; i < sweep.size(); ++i)
    if (sweep[i].second.size() > 1)
      name += (name.empty() ? "" : ",") + defines[i].first + "=" +
              defines[i].second;
  return name;
}
