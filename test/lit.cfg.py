# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "Tegula"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".tile", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tegula_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# FileCheck, not, count come from the LLVM tools directory; ours from bin/.
tool_dirs = [config.tegula_tools_dir, config.llvm_tools_dir]
tools = [ToolSubst(t, unresolved="ignore") for t in ["tile-opt", "tilec", "tile-run", "tile-interp"]]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.tegula_tools_dir, append_path=True)
# Scripts that tests call (scripts/gpu/stage-agreement.py) find the tools
# through TEGULA_BUILD_DIR: the build under test, build-asan/ included.
config.environment["TEGULA_BUILD_DIR"] = config.tegula_obj_root

# ptxas (from the CUDA toolkit) assembles generated PTX in the Target tests.
import shutil
if shutil.which("ptxas"):
    config.available_features.add("ptxas")
    # Wrappers that stand in for ptxas (to make it fail) call the real one.
    config.substitutions.append(("%ptxas-path", shutil.which("ptxas")))

# A sanitizer build (TEGULA_SANITIZE, build-asan/): a finding aborts the tool
# (abort_on_error), so even a `not tool ...` line fails on it, as `not`
# passes a non-zero exit but not a crash. Options already in the
# environment come last and win.
if config.tegula_sanitize:
    config.available_features.add("sanitizer")
    symbolizer = os.path.join(config.llvm_tools_dir, "llvm-symbolizer")
    defaults = {
        "ASAN_OPTIONS": "abort_on_error=1:detect_leaks=1",
        "UBSAN_OPTIONS": "abort_on_error=1:print_stacktrace=1",
        "LSAN_OPTIONS": "",
    }
    for var, value in defaults.items():
        user = config.environment.get(var, "")
        config.environment[var] = ":".join(v for v in (value, user) if v)
    for var in ["ASAN_SYMBOLIZER_PATH", "UBSAN_SYMBOLIZER_PATH"]:
        config.environment.setdefault(var, symbolizer)

# The C ABI (test/CApi) is tested from a C program compiled against
# libtegula_rt.so, with the build's sanitizers; the Python package
# (test/Python) loads the same library through TEGULA_RT_LIBRARY.
rt_lib_dir = os.path.join(config.tegula_obj_root, "lib")
config.environment["TEGULA_RT_LIBRARY"] = os.path.join(rt_lib_dir, "libtegula_rt.so")
c_compiler = shutil.which("clang-22") or shutil.which("cc")
if c_compiler:
    config.available_features.add("c-compiler")
    sanitize = ""
    if config.tegula_sanitize:
        sanitize = " -fsanitize=%s -fno-sanitize-recover=all" % config.tegula_sanitize
    # Without sanitizers: the stand-in libcuda.so.1 of fake-driver.test and
    # capi.test, loaded like the real (uninstrumented) driver; UBSan's
    # function-type check would flag calls through the driver's typedefs.
    config.substitutions.append(
        ("%cc-plain", c_compiler + " -std=c11 -Wall -Wextra -Werror"))
    config.substitutions.append(("%cc-rt", "%s -std=c11 -Wall -Wextra -Werror%s -I%s -L%s -Wl,-rpath,%s" % (
        c_compiler, sanitize, os.path.join(config.tegula_src_root, "include"), rt_lib_dir, rt_lib_dir)))
    # The C ABI library a C program links (-l%tegula-rt): in a sanitizer
    # build, libtegula_rt_sanitized.so, instrumented like the program
    # (lib/Runtime/CMakeLists.txt).
    config.substitutions.append(
        ("%tegula-rt", "tegula_rt_sanitized" if config.tegula_sanitize else "tegula_rt"))
python = "/usr/bin/python3"
config.substitutions.append(("%py3", python))
config.substitutions.append(("%tegula-src", config.tegula_src_root))
import subprocess
if subprocess.run([python, "-c", "import pytest"], capture_output=True).returncode == 0:
    config.available_features.add("pytest")
