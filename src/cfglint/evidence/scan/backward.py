"""Transposed (non-contiguous) tensors fed to a matmul in custom backward passes."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

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

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.MatrixMultiply):
            for operand in (node.left, node.right):
                if self._transposed(operand):
                    self._backward_site(operand, node, self.at(node))
                    break

    # -- custom backward ----------------------------------------------------------------
    def _transposed(self, node: cst.BaseExpression) -> bool:
        """A transposed view that was not made contiguous."""
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute):
                if func.attr.value == "contiguous":
                    return False
                if func.attr.value in _TRANSPOSE_METHODS:
                    return True
            _, q = self.qualify(func)
            return q in _TRANSPOSE_FUNCS
        if isinstance(node, cst.Attribute):
            return node.attr.value in _TRANSPOSE_ATTRS
        if isinstance(node, cst.Name):
            return node.value in self.cur.tainted
        return False

    def _check_matmul(self, node: cst.Call, qual: str | None, line: int) -> None:
        func = node.func
        operands: Sequence[cst.BaseExpression] = ()
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if qual in _MATMUL_FUNCS:
            operands = positional[:2]
        elif qual in _ADD_MATMUL_FUNCS:
            operands = positional[1:3]
        elif isinstance(func, cst.Attribute) and func.attr.value in _ADD_MATMUL_METHODS:
            operands = positional[:2]
        elif isinstance(func, cst.Attribute) and func.attr.value in _MATMUL_METHODS:
            if isinstance(func.value, cst.Name) and func.value.value == "self":
                operands = positional[:2]  # self.matmul = ops.MatMul(): a MindSpore cell
            else:
                operands = [func.value, *positional[:1]]
        elif isinstance(func, cst.Call):
            raw_p, q_p = self.qualify(func.func)
            if (q_p or raw_p or "").endswith(_MATMUL_PRIMS):
                operands = positional[:2]
        for operand in operands:
            if self._transposed(operand):
                self._backward_site(operand, node, line)
                return

    def _backward_site(self, operand: cst.CSTNode, node: cst.CSTNode, line: int) -> None:
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
