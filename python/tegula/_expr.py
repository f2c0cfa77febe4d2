"""Bundle dim expressions ("R / 2", "cdiv(N, 64)") over ints or PyTorch's
symbolic sizes, for fake (meta) outputs: the C runtime evaluates them for
real launches."""

from __future__ import annotations

import ast
from typing import Any, Mapping


def _div(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)  # C: truncates toward zero
        return q if (a >= 0) == (b > 0) else -q
    return a // b  # sizes: non-negative


def _mod(a: Any, b: Any) -> Any:
    return a - _div(a, b) * b


_BINARY = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
           ast.Mult: lambda a, b: a * b, ast.Div: _div, ast.Mod: _mod}
_CALLS = {"cdiv": lambda a, b: _div(a + b - 1, b), "min": min, "max": max}


def evaluate(text: str, env: Mapping[str, Any]) -> Any:
    """The value of a dim expression; KeyError for an unbound name,
    ValueError for what a dim cannot hold."""

    def walk(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            return env[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return _BINARY[type(node.op)](walk(node.left), walk(node.right))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and
                node.func.id in _CALLS and len(node.args) == 2):
            return _CALLS[node.func.id](*(walk(a) for a in node.args))
        raise ValueError(f"unsupported dim expression '{text}'")

    return walk(ast.parse(text, mode="eval"))
