"""Transposed (non-contiguous) tensors fed to a matmul in custom backward passes."""

from __future__ import annotations

import ast
from collections.abc import Sequence

from cfglint.evidence.scan.common import positional
from cfglint.evidence.scan.model import BackwardSite, SrcLoc

_TRANSPOSE_METHODS = frozenset({"t", "transpose", "permute", "swapaxes", "swapdims"})
_TRANSPOSE_ATTRS = frozenset({"T", "mT", "mH", "H"})

_TRANSPOSE_FUNCS = frozenset(
    {
        "torch.t",
        "torch.transpose",
        "torch.permute",
        "torch.swapaxes",
        "mindspore.ops.transpose",
        "mindspore.ops.permute",
        "mindspore.ops.swapaxes",
        "mindspore.mint.transpose",
        "mindspore.mint.permute",
    }
)
_MATMUL_METHODS = frozenset({"mm", "matmul", "bmm"})
_MATMUL_FUNCS = frozenset(
    {
        "torch.matmul",
        "torch.mm",
        "torch.bmm",
        "mindspore.ops.matmul",
        "mindspore.ops.bmm",
        "mindspore.ops.mm",
        "mindspore.mint.matmul",
        "mindspore.mint.mm",
        "mindspore.mint.bmm",
    }
)
_MATMUL_PRIMS = ("MatMul", "BatchMatMul")
# input + mat1 @ mat2: the two matrix operands are the 2nd and 3rd arguments (torch.addmm
# (input, mat1, mat2, *, beta, alpha); tensor.addmm(mat1, mat2) on the input itself)
_ADD_MATMUL_FUNCS = frozenset({"torch.addmm", "torch.baddbmm", "torch.addbmm"})
_ADD_MATMUL_METHODS = frozenset({"addmm", "addmm_", "baddbmm", "baddbmm_", "addbmm", "addbmm_"})


class BackwardMixin:
    """Part of the scanner's visitor (see :mod:`scanner`): custom backward passes."""

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.MatMult):
            for operand in (node.left, node.right):
                if self._transposed(operand):
                    self._backward_site(operand, node, node.lineno)
                    break

    # -- custom backward ----------------------------------------------------------------
    def _transposed(self, node: ast.expr) -> bool:
        """A transposed view that was not made contiguous."""
        c = node.__class__
        if c is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            if isinstance(func, ast.Attribute):
                if func.attr == "contiguous":
                    return False
                if func.attr in _TRANSPOSE_METHODS:
                    return True
            _, q = self.qualify(func)
            return q in _TRANSPOSE_FUNCS
        if c is ast.Attribute:
            return node.attr in _TRANSPOSE_ATTRS  # type: ignore[attr-defined]
        if c is ast.Name:
            return node.id in self.cur.tainted  # type: ignore[attr-defined]
        return False

    def _check_matmul(self, node: ast.Call, qual: str | None, line: int) -> None:
        func = node.func
        operands: Sequence[ast.expr] = ()
        args = positional(node)
        if qual in _MATMUL_FUNCS:
            operands = args[:2]
        elif qual in _ADD_MATMUL_FUNCS:
            operands = args[1:3]
        elif isinstance(func, ast.Attribute) and func.attr in _ADD_MATMUL_METHODS:
            operands = args[:2]
        elif isinstance(func, ast.Attribute) and func.attr in _MATMUL_METHODS:
            if isinstance(func.value, ast.Name) and func.value.id == "self":
                operands = args[:2]  # self.matmul = ops.MatMul(): a MindSpore cell
            else:
                operands = [func.value, *args[:1]]
        elif isinstance(func, ast.Call):
            raw_p, q_p = self.qualify(func.func)
            if (q_p or raw_p or "").endswith(_MATMUL_PRIMS):
                operands = args[:2]
        for operand in operands:
            if self._transposed(operand):
                self._backward_site(operand, node, line)
                return

    def _backward_site(self, operand: ast.AST, node: ast.AST, line: int) -> None:
        fn = self.cur
        site = BackwardSite(
            loc=SrcLoc(line=line),
            function=fn.summary.qualname,
            transposed=self.code(operand),
            matmul=self.code(node),
        )
        if fn.backward:
            self.backwards.append(site)
        else:
            # a helper: reported when the linker finds a backward that calls it
            fn.summary.tmatmuls.append(site)
