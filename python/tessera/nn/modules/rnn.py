"""Recurrent layers as torch.nn's: RNN (tanh/relu), LSTM (with optional projections) and
GRU over whole sequences (multi-layer, bidirectional, batch_first, unbatched, or a
PackedSequence of variable-length ones), and the single-step RNNCell, LSTMCell and GRUCell,
with torch's parameter names and gate order."""
import math
import numbers
import warnings

import tessera as _t
from ... import _C
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# the whole-sequence operators (aten/native/nn/RNN.cpp), by mode
_LAYERS = {"RNN_TANH": _C.rnn_tanh, "RNN_RELU": _C.rnn_relu, "LSTM": _C.lstm, "GRU": _C.gru}


class RNNBase(Module):
    """The layers shared by RNN, LSTM and GRU: parameters weight_ih_l{k}, weight_hh_l{k},
    bias_ih_l{k}, bias_hh_l{k} (and weight_hr_l{k} with proj_size), '_reverse' for the
    backward direction, all U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}")
        # current torch's argument checks (1.13 has none for these three)
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size

        gate_size = _GATES[mode] * hidden_size
        out_size = proj_size if proj_size > 0 else hidden_size
        factory = {"device": device, "dtype": dtype}
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else out_size * self._num_directions
            for direction in range(self._num_directions):
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = [("weight_ih", (gate_size, layer_input)), ("weight_hh", (gate_size, out_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for stem, shape in shapes:
                    setattr(self, stem + suffix, Parameter(_C.empty(shape, **factory)))
                    names.append(stem + suffix)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _num_directions(self):
        return 2 if self.bidirectional else 1

    @property
    def _flat_weights(self):
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """Only cuDNN wants one contiguous weight buffer; on tessera's devices this is a no-op,
        as torch's is on CPU."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ------------------------------------------------------------ argument checks

    def check_input(self, input, batch_sizes=None):
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes=None):
        batch = self._batch_of(input, batch_sizes)
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * self._num_directions, batch, size)

    def _batch_of(self, input, batch_sizes):
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return input.size(0) if self.batch_first else input.size(1)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes=None):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx.index_select(1, permutation) if isinstance(hx, _t.Tensor) else \
            tuple(h.index_select(1, permutation) for h in hx)

    # ------------------------------------------------------------ the recurrence

    def _prepare(self, input, name):
        """Rejects what is not a 2-D/3-D tensor; returns (batched input, is_batched, batch dim)."""
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D tensor instead")
        batch_dim = 0 if self.batch_first else 1
        is_batched = input.dim() == 3
        return (input if is_batched else input.unsqueeze(batch_dim)), is_batched, batch_dim

    def _zeros(self, input, size):
        batch = input.size(0) if self.batch_first else input.size(1)
        return _t.zeros(self.num_layers * self._num_directions, batch, size, dtype=input.dtype,
                        device=input.device)

    def _run(self, input, h0, c0=None, batch_sizes=None):
        """All layers and directions through the mode's operator: over a batched input, or
        over packed data when batch_sizes (a tensor) is given; h0/c0 are (layers*dirs, N, *).
        Returns (output, h_n, c_n or None)."""
        hx = [h0, c0] if c0 is not None else h0
        config = (self.bias, self.num_layers, self.dropout, self.training, self.bidirectional)
        layers = _LAYERS[self.mode]
        if batch_sizes is not None:
            result = layers(input, batch_sizes, hx, self._flat_weights, *config)
        else:
            result = layers(input, hx, self._flat_weights, *config, self.batch_first)
        return (result[0], result[1], result[2]) if c0 is not None else (result[0], result[1], None)

    def _forward_packed(self, packed, hx):
        """A PackedSequence in, a PackedSequence out, as torch: hx is given in the caller's
        batch order and is permuted into the sorted one; h_n (and c_n) are permuted back."""
        data, batch_sizes, sorted_indices, unsorted_indices = packed
        lstm = self.mode == "LSTM"
        if hx is None:
            real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
            shape = (self.num_layers * self._num_directions, int(batch_sizes[0]))
            h0 = _t.zeros(shape + (real_hidden,), dtype=data.dtype, device=data.device)
            hx = (h0, _t.zeros(shape + (self.hidden_size,), dtype=data.dtype, device=data.device)) if lstm else h0
        else:
            hx = self.permute_hidden(tuple(hx) if lstm else hx, sorted_indices)
        self.check_forward_args(data, hx, batch_sizes)
        h0, c0 = hx if lstm else (hx, None)
        output, h_n, c_n = self._run(data, h0, c0, batch_sizes=batch_sizes)
        hidden = (h_n, c_n) if lstm else h_n
        return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), \
            self.permute_hidden(hidden, unsorted_indices)

    def _forward_single_state(self, input, hx, name):
        """RNN and GRU: one hidden state tensor."""
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        input, is_batched, batch_dim = self._prepare(input, name)
        if hx is not None:
            if is_batched and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            if not is_batched:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
        else:
            hx = self._zeros(input, self.hidden_size)
        self.check_forward_args(input, hx)
        output, h_n, _ = self._run(input, hx)
        if not is_batched:
            output, h_n = output.squeeze(batch_dim), h_n.squeeze(1)
        return output, h_n


class RNN(RNNBase):
    """Elman RNN: h_t = tanh or relu(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh).
    RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        # current torch takes nonlinearity positionally after num_layers too
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_single_state(input, hx, "RNN")


class GRU(RNNBase):
    """Gated recurrent unit, gates (r, z, n) as torch's."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_single_state(input, hx, "GRU")


class LSTM(RNNBase):
    """Long short-term memory, gates (i, f, g, o); proj_size > 0 projects h_t by weight_hr."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes=None):
        batch = self._batch_of(input, batch_sizes)
        return (self.num_layers * self._num_directions, batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes=None):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        input, is_batched, batch_dim = self._prepare(input, "LSTM")
        if hx is None:
            real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
            hx = (self._zeros(input, real_hidden), self._zeros(input, self.hidden_size))
        elif is_batched:
            if hx[0].dim() != 3 or hx[1].dim() != 3:
                raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but got "
                                   f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
        else:
            if hx[0].dim() != 2 or hx[1].dim() != 2:
                raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D but got "
                                   f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self.check_forward_args(input, hx)
        output, h_n, c_n = self._run(input, hx[0], hx[1])
        if not is_batched:
            output, h_n, c_n = output.squeeze(batch_dim), h_n.squeeze(1), c_n.squeeze(1)
        return output, (h_n, c_n)



# ---------------------------------------------------------------- single steps

class RNNCellBase(Module):
    """weight_ih (chunks*hidden, input), weight_hh (chunks*hidden, hidden) and the two
    biases, all U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_C.empty((num_chunks * hidden_size, input_size), **factory))
        self.weight_hh = Parameter(_C.empty((num_chunks * hidden_size, hidden_size), **factory))
        if bias:
            self.bias_ih = Parameter(_C.empty(num_chunks * hidden_size, **factory))
            self.bias_hh = Parameter(_C.empty(num_chunks * hidden_size, **factory))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.__dict__.get("bias", True) is not True:
            s += f", bias={self.bias}"
        if self.__dict__.get("nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _cell(self, mode, name, input, states):
        """Unsqueezes unbatched input/states, runs one step, returns the batched-or-not result."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for i, state in enumerate(states or ()):
            if state.dim() not in (1, 2):
                what = "hidden" if mode != "LSTM" else f"hx[{i}]"
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {state.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if states is None:
            zeros = _t.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
            states = (zeros,) * (2 if mode == "LSTM" else 1)
        elif not is_batched:
            states = tuple(s.unsqueeze(0) for s in states)
        # one step of the cell operator (aten/native/nn/RNN.cpp), which checks the sizes
        weights = (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        if mode == "LSTM":
            h, c = _t.lstm_cell(input, list(states), *weights)
        else:
            cell = {"RNN_TANH": _t.rnn_tanh_cell, "RNN_RELU": _t.rnn_relu_cell, "GRU": _t.gru_cell}[mode]
            h, c = cell(input, states[0], *weights), None
        if not is_batched:
            h, c = h.squeeze(0), (None if c is None else c.squeeze(0))
        return (h, c) if mode == "LSTM" else h


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: h' = tanh or relu(x W_ih^T + b_ih + h W_hh^T + b_hh)."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return self._cell(mode, "RNNCell", input, None if hx is None else (hx,))


class LSTMCell(RNNCellBase):
    """One LSTM step; forward(input, (h, c)) returns (h', c')."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        return self._cell("LSTM", "LSTMCell", input, None if hx is None else tuple(hx))


class GRUCell(RNNCellBase):
    """One GRU step; forward(input, h) returns h'."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        return self._cell("GRU", "GRUCell", input, None if hx is None else (hx,))
