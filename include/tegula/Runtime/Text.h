//===- Text.h - Quoting user input in messages ------------------*- C++ -*-===//
//
// Bundles and files can hold expressions, names and shapes of any length;
// messages quote them shortened, so an error stays one readable line.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_TEXT_H
#define TEGULA_RUNTIME_TEXT_H

#include <string>
#include <string_view>
#include <vector>

namespace tegula::rt {

/// `text` whole if short, else its start and its length:
/// "N > 0 && N > 0 ... (269996 characters)".
std::string abbreviate(std::string_view text);

/// "a, b, c", at most the first 16 items, then "... (N in all)".
std::string joinList(const std::vector<std::string> &items);

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_TEXT_H
