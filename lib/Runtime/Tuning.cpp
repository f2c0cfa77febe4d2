//===- Tuning.cpp - Choosing a bundle's config at launch ------------------===//

#include "tegula/Runtime/Tuning.h"

#include "tegula/Runtime/File.h"
#include "tegula/Runtime/Text.h"

#include <cstdio>
#include <cstdlib>

namespace tegula::rt {

std::string ConfigChoice::describe() const {
  switch (source) {
  case Source::Pinned:
    return "(pinned by TEGULA_CONFIG)";
  case Source::Tuned:
    return std::string("(tuned") +
           (tunedOn.empty() ? "" : " on '" + tunedOn + "', also " + arch) +
           ": " + (exact ? "" : "nearest ") + "bucket " + bucket + ")";
  case Source::Default:
    break;
  }
  return "(default)";
}

const char *ConfigChoice::sourceName() const {
  switch (source) {
  case Source::Pinned:
    return "pinned";
  case Source::Tuned:
    return "tuned";
  case Source::Default:
    break;
  }
  return "default";
}

namespace {
using nlohmann::json;

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

} // namespace

namespace {
/// Reads entry `item` of a table for `bundle`; false with `why` when it is
/// malformed. A bucket over other size variables (the kernel was rebuilt
/// with other sizes) and PTX hashes that are not the bundle's make the
/// entry stale, not malformed.
bool readEntry(const json &item, const Bundle &bundle, TuningEntry &entry,
               std::string &why) {
  if (!item.is_object() || !item.contains("device") ||
      !item["device"].is_string() || !item.contains("winner") ||
      !item["winner"].is_string()) {
    why = "needs string fields 'device' and 'winner'";
    return false;
  }
  entry.device = item["device"].get<std::string>();
  entry.winner = item["winner"].get<std::string>();
  auto cc = item.find("cc");
  if (cc != item.end() && !cc->is_string()) {
    why = "'cc' must be a string (\"sm_90\")";
    return false;
  }
  if (cc != item.end())
    entry.cc = cc->get<std::string>();
  std::string bucketRule = "'bucket' must give each size variable (" +
                           joinList(bundle.sizeVars) + ") a power of two";
  auto bucket = item.find("bucket");
  if (bucket == item.end() || !bucket->is_object()) {
    why = bucketRule;
    return false;
  }
  bool sameVars = bucket->size() == bundle.sizeVars.size();
  for (const std::string &var : bundle.sizeVars)
    sameVars = sameVars && bucket->contains(var);
  for (const auto &[var, value] : bucket->items())
    if (!value.is_number_integer() || !isPowerOfTwo(value.get<int64_t>())) {
      why = bucketRule;
      return false;
    }
  if (!sameVars) {
    entry.otherSizeVars = entry.stale = true;
    return true;
  }
  for (const std::string &var : bundle.sizeVars)
    entry.bucket.push_back((*bucket)[var].get<int64_t>());
  // Stale: the kernel was rebuilt since it was tuned, so the timings
  // describe other code (a renamed or missing config counts too).
  auto hashes = item.find("ptx_sha256");
  entry.stale = bundle.findConfig(entry.winner) < 0 || hashes == item.end() ||
                !hashes->is_object() || hashes->size() != bundle.configs.size();
  for (const Config &c : bundle.configs) {
    if (entry.stale)
      break;
    auto hash = hashes->find(c.name);
    entry.stale = hash == hashes->end() || !hash->is_string() ||
                  hash->get<std::string>() != c.ptxSha256;
  }
  return true;
}
} // namespace

bool readTuningTable(const std::string &path, const Bundle &bundle, json &root,
                     std::vector<TuningEntry> &entries, std::string &error) {
  std::string prefix = "tuning table '" + path + "': ";
  std::string text, reason;
  if (!readFile(path, text, reason) || !parseUserJson(text, root, reason)) {
    error = prefix + reason;
    return false;
  }
  auto list = root.is_object() ? root.find("entries") : root.end();
  if (!root.is_object() || list == root.end() || !list->is_array()) {
    error = prefix + "expected an object with an array 'entries'";
    return false;
  }
  entries.clear();
  for (size_t i = 0; i < list->size(); ++i) {
    TuningEntry entry;
    std::string why;
    if (!readEntry((*list)[i], bundle, entry, why)) {
      error = prefix + "entries[" + std::to_string(i) + "] " + why;
      return false;
    }
    entries.push_back(std::move(entry));
  }
  return true;
}

bool loadTuningTable(Bundle &bundle, std::string &error) {
  if (bundle.tuningPath.empty())
    return true;
  std::string path = bundle.tuningPath;
  if (size_t slash = bundle.jsonPath.find_last_of('/');
      slash != std::string::npos)
    path = bundle.jsonPath.substr(0, slash + 1) + path;
  bundle.tuningPath = path;
  json root;
  if (!readTuningTable(path, bundle, root, bundle.tuning, error)) {
    error = "bundle '" + bundle.jsonPath + "': " + error;
    return false;
  }
  return true;
}

std::vector<int64_t> bucketOf(const Bundle &bundle, const Env &env) {
  std::vector<int64_t> bucket;
  for (const std::string &var : bundle.sizeVars) {
    auto it = env.find(var);
    int64_t value = it == env.end() ? 1 : it->second, p = 1;
    while (p < value) // Size variables are at most 2^31 - 1.
      p *= 2;
    bucket.push_back(p);
  }
  return bucket;
}

std::string formatBucket(const Bundle &bundle,
                         const std::vector<int64_t> &bucket) {
  std::string text;
  for (size_t i = 0; i < bucket.size() && i < bundle.sizeVars.size(); ++i)
    text +=
        (i ? "," : "") + bundle.sizeVars[i] + "=" + std::to_string(bucket[i]);
  return text;
}

namespace {
int log2Of(int64_t powerOfTwo) {
  int n = 0;
  while (powerOfTwo > 1) {
    powerOfTwo /= 2;
    ++n;
  }
  return n;
}

/// The config TEGULA_CONFIG pins for this kernel: "" when none. Items are
/// separated by ';'; "KERNEL=NAME" pins one kernel, any other item is a
/// config name for every kernel. An item "A=B" is a kernel's pin unless A
/// is one of the bundle's template parameters (tilec names configs
/// "BLOCK_M=64,BLOCK_N=32").
std::string pinnedName(const Bundle &bundle, const std::string &pin) {
  std::string bare;
  size_t start = 0;
  while (start <= pin.size()) {
    size_t end = pin.find(';', start);
    if (end == std::string::npos)
      end = pin.size();
    std::string item = pin.substr(start, end - start);
    start = end + 1;
    if (item.empty())
      continue;
    size_t eq = item.find('=');
    std::string head = eq == std::string::npos ? "" : item.substr(0, eq);
    bool isDefine = false;
    for (const Config &c : bundle.configs)
      isDefine = isDefine || c.defines.contains(head);
    if (eq != std::string::npos && !isDefine && bundle.findConfig(item) < 0) {
      if (head == bundle.kernel)
        return item.substr(eq + 1);
      continue; // Another kernel's.
    }
    if (bare.empty())
      bare = item;
  }
  return bare;
}
} // namespace

namespace {
/// The fresh entry of `bundle`'s table nearest to `bucket` among those
/// `applies` accepts (ties to the earlier), with its distance; null when
/// none. `*skipped` (when given) is set when an accepted entry is stale.
template <typename Pred>
const TuningEntry *
nearestEntry(const Bundle &bundle, const std::vector<int64_t> &bucket,
             Pred applies, int &bestDistance, bool *skipped = nullptr) {
  const TuningEntry *best = nullptr;
  for (const TuningEntry &entry : bundle.tuning) {
    if (!applies(entry))
      continue;
    if (entry.stale) {
      if (skipped)
        *skipped = true;
      continue;
    }
    int distance = 0;
    for (size_t i = 0; i < bucket.size(); ++i)
      distance += std::abs(log2Of(entry.bucket[i]) - log2Of(bucket[i]));
    if (!best || distance < bestDistance) {
      best = &entry;
      bestDistance = distance;
    }
  }
  return best;
}
} // namespace

bool chooseConfig(const Bundle &bundle, const Env &env,
                  const std::string &device, const std::string &arch,
                  const char *pin, ConfigChoice &choice, std::string &error) {
  choice = ConfigChoice();
  if (!bundle.listsConfigs)
    return true;
  if (pin && *pin) {
    std::string name = pinnedName(bundle, pin);
    if (!name.empty()) {
      int index = bundle.findConfig(name);
      if (index < 0) {
        std::string names;
        for (const Config &c : bundle.configs)
          names += (names.empty() ? "" : "; ") + c.name;
        error = "TEGULA_CONFIG: kernel '" + bundle.kernel +
                "' has no config '" + abbreviate(name) +
                "' (configs: " + names + ")";
        return false;
      }
      choice.config = index;
      choice.source = ConfigChoice::Source::Pinned;
      return true;
    }
  }
  if (device.empty())
    return true;
  std::vector<int64_t> bucket = bucketOf(bundle, env);
  int bestDistance = 0;
  bool skipped = false;
  const TuningEntry *best = nearestEntry(
      bundle, bucket,
      [&](const TuningEntry &entry) { return entry.device == device; },
      bestDistance, &skipped);
  // Another GPU of this architecture (an H100's entries on an H200): its
  // winners are far closer to this GPU's than config 0, which is only the
  // first of the list. Its stale entries are skipped without a warning.
  if (!best && !arch.empty())
    best = nearestEntry(
        bundle, bucket,
        [&](const TuningEntry &entry) {
          return entry.device != device && entry.cc == arch;
        },
        bestDistance);
  if (skipped && !bundle.staleWarned->exchange(true)) {
    std::fflush(stdout);
    std::fprintf(stderr,
                 "warning: tuning table '%s': entries for '%s' are stale (the "
                 "PTX of '%s' changed since it was tuned); they are skipped: "
                 "run tile-run --tune again\n",
                 bundle.tuningPath.c_str(), device.c_str(),
                 bundle.kernel.c_str());
  }
  if (!best)
    return true;
  choice.config = bundle.findConfig(best->winner);
  choice.source = ConfigChoice::Source::Tuned;
  choice.bucket = formatBucket(bundle, best->bucket);
  choice.exact = bestDistance == 0;
  if (best->device != device) {
    choice.tunedOn = best->device;
    choice.arch = arch;
  }
  return true;
}

} // namespace tegula::rt
