//===- Output.cpp - tilec's messages and files ----------------------------===//

#include "Driver.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace tegula;

int tilec::fail(const llvm::Twine &message) {
  llvm::errs() << "tilec: error: " << message << "\n";
  return 1;
}

/// Writes `text` to `path` ("-" is stdout). A write that fails (a full
/// disk, /dev/full) is reported and leaves no file behind; LLVM's streams
/// would otherwise abort at exit with "LLVM ERROR: IO failure".
bool tilec::writeFile(llvm::StringRef path, llvm::StringRef text) {
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    fail("cannot write '" + path + "': " + ec.message());
    return false;
  }
  out.os() << text;
  if (path == "-")
    out.os().flush();
  else
    out.os().close();
  if (std::error_code written = out.os().error()) {
    out.os().clear_error();
    fail("cannot write " +
         (path == "-" ? llvm::Twine("to standard output")
                      : llvm::Twine("'") + path + "'") +
         ": " + written.message());
    return false;
  }
  out.keep();
  return true;
}

/// Flushes what tilec printed on stdout (the configs' lines); false, with
/// a message, when that fails, so a full stdout is an error and not an
/// abort at exit.
bool tilec::flushStdout() {
  llvm::outs().flush();
  std::error_code ec = llvm::outs().error();
  if (!ec)
    return true;
  llvm::outs().clear_error();
  fail("cannot write to standard output: " + ec.message());
  return false;
}
