# TEGULA_SANITIZE: a list as -fsanitize= takes it (e.g. "address,undefined"),
# applied to every target. scripts/build-sanitize.sh configures build-asan/
# with it; docs/testing.md describes the run.
#
# LLVM and MLIR come uninstrumented from Debian (Release, no assertions).
# That works: ASan replaces malloc and operator new process-wide, so memory
# that libMLIR allocates and our code misuses is still caught; only accesses
# made inside libMLIR itself go unchecked. Debug builds of our code keep
# assertions on (no NDEBUG): the installed llvm/Config/abi-breaking.h fixes
# LLVM_ENABLE_ABI_BREAKING_CHECKS to 0, so class layouts do not depend on
# NDEBUG, and the asserts inlined from LLVM's headers (cast<>, ArrayRef
# bounds) check our calls too.
set(TEGULA_SANITIZE "" CACHE STRING
  "Sanitizers for every target, as -fsanitize= takes them (e.g. address,undefined)")

if(TEGULA_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TEGULA_SANITIZE needs clang (configure with clang++-22)")
  endif()
  # -fno-sanitize-recover=all: a UBSan finding stops the tool, so a lit test
  # cannot pass over it. UBSan's vptr check needs RTTI, which LLVM's flags
  # turn off; clang drops it silently there and keeps it for lib/Runtime.
  add_compile_options(-fsanitize=${TEGULA_SANITIZE} -fno-omit-frame-pointer
    -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${TEGULA_SANITIZE})
  # The poisoning in LLVM's allocator headers gives false reports against
  # the uninstrumented libMLIR; the header says why.
  add_compile_options(
    "SHELL:-include ${CMAKE_CURRENT_LIST_DIR}/LLVMNoAsanPoisoning.h")
  message(STATUS "Sanitizers: ${TEGULA_SANITIZE}")
endif()
