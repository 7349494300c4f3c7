"""``tessera.einsum`` with torch's Python signature: the operands as separate arguments or
as one list (``einsum("ij,jk", a, b)`` or ``einsum("ij,jk", [a, b])``); the operator
itself (aten::einsum) takes a list.
"""
from . import _C


def einsum(equation, *operands, path=None):
    """einsum(equation, *operands) -> Tensor

    Sums the product of the operands' elements over the subscripts the equation's output
    omits (torch.einsum). Supports ``...``, repeated subscripts (diagonals) and the
    implicit output (subscripts used once, in alphabetical order, upper case first).
    """
    if not isinstance(equation, str):
        raise NotImplementedError("einsum(op1, sublist1, op2, sublist2, ...): the sublist form is not supported; "
                                  "pass an equation string")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return _C.einsum(equation, list(operands), path=path)
