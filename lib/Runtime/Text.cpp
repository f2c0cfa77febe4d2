//===- Text.cpp - Quoting user input in messages --------------------------===//

#include "tegula/Runtime/Text.h"

namespace tegula::rt {

std::string abbreviate(std::string_view text) {
  if (text.size() <= 120)
    return std::string(text);
  return std::string(text.substr(0, 60)) + "... (" +
         std::to_string(text.size()) + " characters)";
}

std::string joinList(const std::vector<std::string> &items) {
  constexpr size_t kShown = 16;
  std::string s;
  for (size_t i = 0; i < items.size() && i < kShown; ++i)
    s += (i ? ", " : "") + abbreviate(items[i]);
  if (items.size() > kShown)
    s += ", ... (" + std::to_string(items.size()) + " in all)";
  return s;
}

} // namespace tegula::rt
