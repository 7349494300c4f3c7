"""tessera.nn.grad (also nn.functional.grad): the gradients of conv1d/2d/3d with respect
to their input or weight, given the other operand and the output gradient, as
torch.nn.grad. Each is one call of the convolution_backward op with only that gradient
requested; the operand not given is a stand-in of the right shape (its values unused)."""
import collections.abc

import tessera as _t

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]


def _spatial(n):
    """An int-or-sequence to an n-long list converter."""
    def convert(value):
        return list(value) if isinstance(value, collections.abc.Iterable) else [value] * n
    return convert


_single, _pair, _triple = _spatial(1), _spatial(2), _spatial(3)


def _conv_grad(which, input, weight, grad_output, stride, padding, dilation, groups, tuple_of):
    """Gradient number `which` (0: input, 1: weight) of a plain (untransposed) convolution."""
    mask = (which == 0, which == 1, False)
    grads = _t.ops.aten.convolution_backward(grad_output, input, weight, None, tuple_of(stride),
                                             tuple_of(padding), tuple_of(dilation), False, [0],
                                             groups, mask)
    return grads[which]


def _stand_in(like, size):
    # a broadcast one-element tensor: the right shape without allocating it
    return like.new_empty(1).expand(size)


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """d(conv1d)/d(input) for an input of input_size, weight [C_out, C_in/groups, kW] and
    grad_output [N, C_out, L_out]."""
    return _conv_grad(0, _stand_in(grad_output, input_size), weight, grad_output, stride, padding, dilation, groups,
                      _single)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """d(conv1d)/d(weight) for a weight of weight_size, input [N, C_in, L] and grad_output."""
    return _conv_grad(1, input, _stand_in(grad_output, weight_size), grad_output, stride, padding, dilation, groups,
                      _single)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """d(conv2d)/d(input) for an input of input_size, weight [C_out, C_in/groups, kH, kW]
    and grad_output [N, C_out, H_out, W_out]."""
    return _conv_grad(0, _stand_in(grad_output, input_size), weight, grad_output, stride, padding, dilation, groups,
                      _pair)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """d(conv2d)/d(weight) for a weight of weight_size, input [N, C_in, H, W] and
    grad_output."""
    return _conv_grad(1, input, _stand_in(grad_output, weight_size), grad_output, stride, padding, dilation, groups,
                      _pair)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """d(conv3d)/d(input) for an input of input_size, weight [C_out, C_in/groups, kT, kH,
    kW] and grad_output [N, C_out, T_out, H_out, W_out]."""
    return _conv_grad(0, _stand_in(grad_output, input_size), weight, grad_output, stride, padding, dilation, groups,
                      _triple)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """d(conv3d)/d(weight) for a weight of weight_size, input [N, C_in, T, H, W] and
    grad_output."""
    return _conv_grad(1, input, _stand_in(grad_output, weight_size), grad_output, stride, padding, dilation, groups,
                      _triple)
