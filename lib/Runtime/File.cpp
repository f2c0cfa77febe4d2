//===- File.cpp - Reading user-named files without surprises ---------------===//

#include "tegula/Runtime/File.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

using namespace tegula::rt;

bool tegula::rt::readFile(const std::string &path, std::string &contents,
                          std::string &reason) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    reason = std::strerror(errno);
    return false;
  }
  if (S_ISDIR(info.st_mode)) {
    reason = "it is a directory";
    return false;
  }
  if (!S_ISREG(info.st_mode)) {
    reason = "it is not a regular file";
    return false;
  }
  FILE *file = std::fopen(path.c_str(), "rb");
  if (!file) {
    reason = std::strerror(errno);
    return false;
  }
  contents.clear();
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0)
    contents.append(buffer, n);
  bool failed = std::ferror(file);
  std::fclose(file);
  if (failed) {
    reason = "a read failed";
    return false;
  }
  return true;
}

bool tegula::rt::writeFile(const std::string &path, std::string_view contents,
                           std::string &reason) {
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    reason = "it is a directory";
    return false;
  }
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file) {
    reason = std::strerror(errno);
    return false;
  }
  bool ok =
      std::fwrite(contents.data(), 1, contents.size(), file) == contents.size();
  int writeErrno = errno;
  // fclose flushes, so a full disk may show only here.
  if (std::fclose(file) != 0 && ok) {
    ok = false;
    writeErrno = errno;
  }
  if (!ok)
    reason = std::strerror(writeErrno);
  return ok;
}
