"""The exceptions tegula raises."""

from __future__ import annotations

import re
from typing import Optional

_ARGUMENT = re.compile(r"(?:argument|scalar|--scalar) '?([A-Za-z_][A-Za-z0-9_]*)'?")


class Error(Exception):
    """Any failure of tegula: a missing library, a bad bundle, a launch."""


class BundleError(Error):
    """A bundle that cannot be read or is malformed."""


class LaunchError(Error):
    """A launch-time check failed before anything reached the driver: an
    argument's shape, dtype, rank, strides or alignment, a `requires`
    condition, the grid, or a missing argument. `argument` names the
    parameter when the message is about one."""

    def __init__(self, message: str, argument: Optional[str] = None):
        super().__init__(message)
        if argument is None:
            match = _ARGUMENT.search(message)
            argument = match.group(1) if match else None
        self.argument = argument


class DriverError(Error):
    """No CUDA driver or GPU, no current context, or a failed driver call
    (the message names the call). `status` is the C ABI's status code."""

    def __init__(self, message: str, status: int = 0):
        super().__init__(message)
        self.status = status


class CompileError(Error):
    """tegula.compile() could not produce a bundle: tilec is not installed,
    failed or crashed, or target="auto" met a GPU that no target supports.
    `diagnostics` holds tilec's stderr (`FILE:LINE:COL: error: ...`), also
    in the message; `returncode` is tilec's exit status (negative: the
    signal that killed it), None when tilec did not run."""

    def __init__(self, message: str, diagnostics: str = "",
                 returncode: Optional[int] = None):
        super().__init__(message)
        self.diagnostics = diagnostics
        self.returncode = returncode
