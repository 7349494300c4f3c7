"""nn.RNN, LSTM, GRU and their cells against torch.nn 1.13: weights copied through
state_dict, the same inputs and initial states; outputs, final states, input and state
grads and every parameter grad; multi-layer, bidirectional, batch_first, unbatched, no
bias, LSTM projections, dropout between layers; names, reprs, init and errors."""
import numpy as np
import pytest
import torch

import tessera
import tessera.nn as nn

TOL = dict(rtol=1e-9, atol=1e-10)
IN, HID, SEQ, BATCH = 3, 4, 5, 2


def rand(*shape, seed=0):
    return torch.rand(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 2 - 1


def T(t):
    return tessera.from_numpy(t.detach().numpy().copy())


def back(t):
    return torch.from_numpy(t.detach().numpy().copy())


def leaves(*tensors):
    return [t.clone().requires_grad_() for t in tensors], [T(t).requires_grad_() for t in tensors]


def make_pair(name, *args, **kw):
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(*args, dtype=torch.float64, **kw)
    mine = getattr(nn, name)(*args, dtype=tessera.float64, **kw)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    assert repr(mine) == repr(theirs)
    result = mine.load_state_dict({k: T(v) for k, v in theirs.state_dict().items()})
    assert not result.missing_keys and not result.unexpected_keys
    return theirs, mine


def flatten(result):
    """(output, h) / (output, (h, c)) / h / (h, c) as a flat list."""
    if isinstance(result, (tuple, list)):
        return [x for item in result for x in flatten(item)]
    return [result]


def compare(theirs, mine, out_t, out_m, inputs_t, inputs_m, seed=50):
    outs_t, outs_m = flatten(out_t), flatten(out_m)
    assert len(outs_t) == len(outs_m)
    for a, b in zip(outs_t, outs_m):
        assert tuple(b.shape) == tuple(a.shape)
        torch.testing.assert_close(back(b), a, **TOL)
    # a random upstream grad for every output, so each state's path is checked
    grads = [rand(*a.shape, seed=seed + i) for i, a in enumerate(outs_t)]
    torch.autograd.backward(outs_t, grads)
    tessera.autograd.backward(outs_m, [T(g) for g in grads])
    for a, b in zip(inputs_t, inputs_m):
        torch.testing.assert_close(back(b.grad), a.grad, **TOL)
    mine_params = dict(mine.named_parameters())
    for name, p in theirs.named_parameters():
        torch.testing.assert_close(back(mine_params[name].grad), p.grad, **TOL, msg=name)


# ---------------------------------------------------------------- whole sequences

SEQ_CASES = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2, "bidirectional": True}),
    ("RNN", {"batch_first": True, "bias": False}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("LSTM", {"num_layers": 2, "proj_size": 2}),
    ("LSTM", {"bidirectional": True, "proj_size": 3, "bias": False}),
    ("GRU", {}),
    ("GRU", {"num_layers": 3, "bidirectional": True}),
    ("GRU", {"batch_first": True, "num_layers": 2, "bias": False}),
]
IDS = [name + "-" + "-".join(f"{k}={v}" for k, v in kw.items()) for name, kw in SEQ_CASES]


def _states(name, kw, batch, seed):
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    h_size = kw.get("proj_size", 0) or HID
    shape = (layers, batch) if batch else (layers,)
    h = rand(*shape, h_size, seed=seed)
    return [h, rand(*shape, HID, seed=seed + 1)] if name == "LSTM" else [h]


@pytest.mark.parametrize("with_hx", [False, True])
@pytest.mark.parametrize("name,kw", SEQ_CASES, ids=IDS)
def test_sequence_layers_match_torch(name, kw, with_hx):
    theirs, mine = make_pair(name, IN, HID, **kw)
    x = rand(*((BATCH, SEQ, IN) if kw.get("batch_first") else (SEQ, BATCH, IN)), seed=1)
    tensors = [x] + (_states(name, kw, BATCH, 2) if with_hx else [])
    ins_t, ins_m = leaves(*tensors)

    def call(module, ins):
        if not with_hx:
            return module(ins[0])
        return module(ins[0], tuple(ins[1:]) if name == "LSTM" else ins[1])

    compare(theirs, mine, call(theirs, ins_t), call(mine, ins_m), ins_t, ins_m)


@pytest.mark.parametrize("with_hx", [False, True])
@pytest.mark.parametrize("name,kw", [("RNN", {"num_layers": 2}), ("LSTM", {"bidirectional": True, "proj_size": 2}),
                                     ("GRU", {"batch_first": True, "bidirectional": True})])
def test_unbatched_input(name, kw, with_hx):
    theirs, mine = make_pair(name, IN, HID, **kw)
    tensors = [rand(SEQ, IN, seed=3)] + (_states(name, kw, None, 4) if with_hx else [])
    ins_t, ins_m = leaves(*tensors)
    hx_t = (tuple(ins_t[1:]) if name == "LSTM" else ins_t[1]) if with_hx else None
    hx_m = (tuple(ins_m[1:]) if name == "LSTM" else ins_m[1]) if with_hx else None
    compare(theirs, mine, theirs(ins_t[0], hx_t), mine(ins_m[0], hx_m), ins_t, ins_m)


def test_float32_lstm():
    torch.manual_seed(0)
    theirs = torch.nn.LSTM(IN, HID, num_layers=2, bidirectional=True)
    mine = nn.LSTM(IN, HID, num_layers=2, bidirectional=True)
    mine.load_state_dict({k: T(v) for k, v in theirs.state_dict().items()})
    x = rand(SEQ, BATCH, IN, seed=5).float()
    out_t, (h_t, c_t) = theirs(x)
    out_m, (h_m, c_m) = mine(T(x))
    assert out_m.dtype == tessera.float32
    for a, b in ((out_t, out_m), (h_t, h_m), (c_t, c_m)):
        torch.testing.assert_close(back(b), a, rtol=1e-5, atol=1e-6)


def test_dropout_between_layers():
    theirs, mine = make_pair("GRU", IN, HID, num_layers=3, dropout=1.0)
    x = rand(SEQ, BATCH, IN, seed=6)
    # p = 1 zeroes every layer's output but the last's: deterministic, so torch can check it
    out_t, h_t = theirs(x)
    out_m, h_m = mine(T(x))
    torch.testing.assert_close(back(out_m), out_t, **TOL)
    torch.testing.assert_close(back(h_m), h_t, **TOL)
    theirs.eval()
    mine.eval()
    torch.testing.assert_close(back(mine(T(x))[0]), theirs(x)[0], **TOL)

    half = nn.LSTM(IN, HID, num_layers=2, dropout=0.5, dtype=tessera.float64)
    ref = half.eval()(T(x))[0].detach().numpy()
    assert not np.allclose(half.train()(T(x))[0].detach().numpy(), ref)


# ---------------------------------------------------------------- cells

CELL_CASES = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("RNNCell", {"bias": False}),
              ("LSTMCell", {}), ("LSTMCell", {"bias": False}), ("GRUCell", {}), ("GRUCell", {"bias": False})]


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_hx", [False, True])
@pytest.mark.parametrize("name,kw", CELL_CASES, ids=[n + "-" + "-".join(map(str, kw.values())) for n, kw in CELL_CASES])
def test_cells_match_torch(name, kw, with_hx, batched):
    theirs, mine = make_pair(name, IN, HID, **kw)
    lead = (BATCH,) if batched else ()
    tensors = [rand(*lead, IN, seed=7)]
    if with_hx:
        tensors += [rand(*lead, HID, seed=8)] + ([rand(*lead, HID, seed=9)] if name == "LSTMCell" else [])
    ins_t, ins_m = leaves(*tensors)
    hx_t = (tuple(ins_t[1:]) if name == "LSTMCell" else ins_t[1]) if with_hx else None
    hx_m = (tuple(ins_m[1:]) if name == "LSTMCell" else ins_m[1]) if with_hx else None
    compare(theirs, mine, theirs(ins_t[0], hx_t), mine(ins_m[0], hx_m), ins_t, ins_m)


def test_cell_unrolled_equals_layer():
    """An LSTMCell stepped over time computes what a one-layer LSTM with its weights does."""
    cell = nn.LSTMCell(IN, HID, dtype=tessera.float64)
    layer = nn.LSTM(IN, HID, dtype=tessera.float64)
    layer.load_state_dict({k + "_l0": v for k, v in cell.state_dict().items()})
    x = T(rand(SEQ, BATCH, IN, seed=10))
    h = c = tessera.zeros(BATCH, HID, dtype=tessera.float64)
    outs = []
    for t in range(SEQ):
        h, c = cell(x[t], (h, c))
        outs.append(h)
    out, (h_n, c_n) = layer(x)
    np.testing.assert_allclose(tessera.stack(outs).detach().numpy(), out.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(c.detach().numpy(), c_n[0].detach().numpy(), rtol=1e-12)


# ---------------------------------------------------------------- structure and errors

def test_parameter_names_shapes_init_and_all_weights():
    for name, kw in SEQ_CASES:
        theirs = getattr(torch.nn, name)(IN, HID, **kw)
        mine = getattr(nn, name)(IN, HID, **kw)
        assert [(n, tuple(p.shape)) for n, p in mine.named_parameters()] == \
               [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
        assert [[tuple(p.shape) for p in ws] for ws in mine.all_weights] == \
               [[tuple(p.shape) for p in ws] for ws in theirs.all_weights]
        assert mine._flat_weights_names == theirs._flat_weights_names
    big = nn.GRU(IN, 16, num_layers=2, bidirectional=True)
    values = np.concatenate([p.detach().numpy().ravel() for p in big.parameters()])
    assert np.abs(values).max() <= 0.25 and np.abs(values).max() > 0.24 and values.std() > 0.1
    cell = nn.LSTMCell(IN, 16)
    assert np.abs(cell.weight_hh.detach().numpy()).max() <= 0.25
    assert repr(nn.RNN(2, 3, 2, "relu")) == repr(torch.nn.RNN(2, 3, 2, nonlinearity="relu"))
    assert repr(nn.RNNCell(2, 3, nonlinearity="relu")) == "RNNCell(2, 3, nonlinearity=relu)"
    assert repr(nn.LSTM(2, 3, dropout=0.5, num_layers=2)) == repr(torch.nn.LSTM(2, 3, dropout=0.5, num_layers=2))


def test_module_conversion_keeps_weights_in_use():
    rnn = nn.GRU(IN, HID)
    rnn.double()
    out, _ = rnn(tessera.zeros(SEQ, BATCH, IN, dtype=tessera.float64))
    assert out.dtype == tessera.float64


def test_errors_like_torch():
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM, not RNN or GRU"):
        nn.GRU(IN, HID, proj_size=2)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(IN, HID, proj_size=HID)
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.RNN(IN, HID, dropout=1.5)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.RNN(IN, HID, dropout=0.2)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'sigmoid'"):
        nn.RNN(IN, HID, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.LSTM(IN, 0)
    lstm = nn.LSTM(IN, HID, num_layers=2)
    x = tessera.randn(SEQ, BATCH, IN)
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D"):
        lstm(x.unsqueeze(0))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 3, got 2"):
        lstm(x[..., :2])
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(2, 2, 4\), got \[1, 2, 4\]"):
        lstm(x, (tessera.zeros(1, BATCH, HID), tessera.zeros(2, BATCH, HID)))
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx and cx should also be 3-D"):
        lstm(x, (tessera.zeros(2, HID), tessera.zeros(2, HID)))
    gru = nn.GRU(IN, HID)
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got \[1, 3, 4\]"):
        gru(x, tessera.zeros(1, 3, HID))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D but got 3-D"):
        gru(x[:, 0], tessera.zeros(1, 1, HID))

    cell = nn.GRUCell(IN, HID)
    with pytest.raises(ValueError, match="GRUCell: Expected input to be 1D or 2D, got 3D"):
        cell(x)
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 2 expected 3"):
        cell(x[0, :, :2])
    with pytest.raises(RuntimeError, match="hidden0 has inconsistent hidden_size: got 3, expected 4"):
        cell(x[0], tessera.zeros(BATCH, 3))


# ---------------------------------------------------------------- the per-step split
# The layers take a sequence apart with unbind (padded) and split_with_sizes (packed):
# each records one node for all its pieces, as torch's, so the pieces' grads are joined
# in one stack / cat (a SliceBackward per piece would cost O(T^2)).

@pytest.mark.parametrize("used", [(0, 1, 2, 3, 4), (4, 1), (2,)])
@pytest.mark.parametrize("how", ["unbind", "split_with_sizes"])
def test_sequence_split_matches_torch(how, used):
    def pieces(x):
        return x.unbind(0) if how == "unbind" else x.split_with_sizes([1, 1, 1, 1, 1], 0)
    # a non-contiguous input, as the time-major view of batch_first data is
    x_t = rand(3, 5, 4, seed=12).transpose(0, 1).requires_grad_()
    x_m = T(rand(3, 5, 4, seed=12)).transpose(0, 1).requires_grad_()
    parts_t, parts_m = pieces(x_t), pieces(x_m)
    assert len({id(p.grad_fn) for p in parts_m}) == 1
    assert parts_m[0].grad_fn.name() == parts_t[0].grad_fn.name()
    for a, b in zip(parts_t, parts_m):
        torch.testing.assert_close(back(b), a, rtol=0, atol=0)
    grads = [rand(*parts_t[i].shape, seed=20 + i) for i in used]
    torch.autograd.backward([parts_t[i] * parts_t[i] for i in used], grads)
    tessera.autograd.backward([parts_m[i] * parts_m[i] for i in used], [T(g) for g in grads])
    torch.testing.assert_close(back(x_m.grad), x_t.grad, **TOL)
    # slices nobody uses get zeros from the node
    x = T(rand(5, 2, 3, seed=11)).requires_grad_()
    assert tessera.autograd.gradcheck(lambda a: pieces(a)[1].sin(), (x,))
    assert tessera.autograd.gradgradcheck(lambda a: pieces(a)[3].sin(), (x,))


def test_write_through_a_piece_rebases_on_the_base():
    """In-place on one piece of unbind: tessera rebases the base's history (torch refuses
    writes to multi-output views; tessera's views replay by strides, so it can keep them)."""
    x_t = rand(3, 4, seed=13).requires_grad_()
    x_m = T(rand(3, 4, seed=13)).requires_grad_()
    y = x_m * 2
    _, b, _ = y.unbind(0)
    b.mul_(3)
    (y * y).sum().backward()
    want = (x_t * 2 * torch.tensor([[1.0], [3.0], [1.0]])).pow(2).sum()
    (g_t,) = torch.autograd.grad(want, x_t)
    torch.testing.assert_close(back(x_m.grad), g_t, **TOL)


def test_lstm_double_backward_matches_torch():
    """A gradient penalty: the per-step split's backward is itself differentiable."""
    theirs, mine = make_pair("LSTM", IN, HID, num_layers=2)
    (x_t,), (x_m,) = leaves(rand(SEQ, BATCH, IN, seed=14))
    (g_t,) = torch.autograd.grad(theirs(x_t)[0].pow(2).sum(), x_t, create_graph=True)
    (g_m,) = tessera.autograd.grad(mine(x_m)[0].pow(2).sum(), x_m, create_graph=True)
    g_t.pow(2).sum().backward()
    g_m.pow(2).sum().backward()
    torch.testing.assert_close(back(x_m.grad), x_t.grad, **TOL)
    torch.testing.assert_close(back(mine.weight_hh_l0.grad), theirs.weight_hh_l0.grad, **TOL)


def test_layer_operators_check_the_initial_states():
    """The operators themselves refuse states whose batch differs from the input's (a
    batch of one would otherwise broadcast over the steps)."""
    x = tessera.zeros(5, 3, IN)
    params = [tessera.zeros(HID, IN), tessera.zeros(HID, HID)]
    with pytest.raises(RuntimeError, match=r"Expected hx of size \(1, 3, \*\)"):
        tessera.rnn_tanh(x, tessera.zeros(1, 1, HID), params, False, 1, 0.0, False, False, False)
    with pytest.raises(RuntimeError, match=r"Expected cx of size \(1, 3, \*\)"):
        tessera.lstm(x, [tessera.zeros(1, 3, HID), tessera.zeros(1, 1, HID)],
                     [tessera.zeros(4 * HID, IN), tessera.zeros(4 * HID, HID)], False, 1, 0.0, False, False, False)
    with pytest.raises(RuntimeError, match="got an incorrect number of RNN parameters"):
        tessera.gru(x, tessera.zeros(1, 3, HID), params[:1], False, 1, 0.0, False, False, False)
    data, sizes = tessera.zeros(6, IN), tessera.tensor([3, 2, 1])
    with pytest.raises(RuntimeError, match=r"Expected hx of size \(2, 3, \*\)"):
        tessera.gru(data, sizes, tessera.zeros(2, 1, HID), params * 2, False, 2, 0.0, False, False)
