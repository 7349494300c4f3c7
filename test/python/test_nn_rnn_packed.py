"""tessera.nn.utils.rnn and PackedSequence input to nn.RNN / LSTM / GRU against torch 1.13:
packing, padding and unpadding give torch's values, batch sizes, index permutations and
errors, with gradients through them; the recurrent layers on packed batches give torch's
packed outputs, h_n / c_n, input, state and parameter grads."""
import numpy as np
import pytest
import torch
import torch.nn.utils.rnn as trnn

import tessera
import tessera.nn as nn
import tessera.nn.utils.rnn as srnn
from test_nn_rnn import T, back, rand  # the same float64 data and conversions

TOL = dict(rtol=1e-9, atol=1e-10)
IN, HID = 3, 4


def close(mine, theirs):
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    torch.testing.assert_close(back(mine), theirs, **TOL)


def same_packed(mine, theirs):
    assert isinstance(mine, srnn.PackedSequence)
    close(mine.data, theirs.data)
    assert mine.batch_sizes.tolist() == theirs.batch_sizes.tolist()
    assert str(mine.batch_sizes.dtype) == "tessera.int64" and mine.batch_sizes.device.type == "cpu"
    for a, b in [(mine.sorted_indices, theirs.sorted_indices), (mine.unsorted_indices, theirs.unsorted_indices)]:
        assert (a is None) == (b is None)
        if a is not None:
            assert a.tolist() == b.tolist()


def raises_alike(fn_mine, fn_theirs):
    with pytest.raises(Exception) as theirs:
        fn_theirs()
    with pytest.raises(type(theirs.value)) as mine:
        fn_mine()
    assert str(mine.value) == str(theirs.value)


# ---------------------------------------------------------------- the utilities

LENGTH_CASES = [([5, 3, 3, 1], True), ([2, 5, 1, 4], False), ([4], True), ([1, 1, 1], True), ([3, 2, 6], False)]


@pytest.mark.parametrize("lengths,enforce_sorted", LENGTH_CASES)
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_pad_round_trip(lengths, enforce_sorted, batch_first):
    steps, batch = max(lengths) + 1, len(lengths)
    x = rand(*((batch, steps) if batch_first else (steps, batch)), 2, seed=1)
    xt, xm = x.clone().requires_grad_(), T(x).requires_grad_()
    pt = trnn.pack_padded_sequence(xt, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    pm = srnn.pack_padded_sequence(xm, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    same_packed(pm, pt)
    for total in (None, steps + 2):
        out_t, len_t = trnn.pad_packed_sequence(pt, batch_first=batch_first, padding_value=-7.0, total_length=total)
        out_m, len_m = srnn.pad_packed_sequence(pm, batch_first=batch_first, padding_value=-7.0, total_length=total)
        close(out_m, out_t)
        assert len_m.tolist() == len_t.tolist() and str(len_m.dtype) == "tessera.int64"
    g = rand(*out_t.shape, seed=2)
    out_t.backward(g)
    out_m.backward(T(g))
    close(xm.grad, xt.grad)


def test_lengths_forms():
    x = rand(4, 3, 2)
    for lengths in ([3, 2, 1], (3, 2, 1), torch.tensor([3, 2, 1]), torch.tensor([3.7, 2.0, 1.2])):
        ln_m = T(lengths) if isinstance(lengths, torch.Tensor) else lengths
        same_packed(srnn.pack_padded_sequence(T(x), ln_m), trnn.pack_padded_sequence(x, lengths))
    same_packed(srnn.pack_padded_sequence(T(x), tessera.tensor([3, 2, 1], dtype=tessera.int32)),
                trnn.pack_padded_sequence(x, torch.tensor([3, 2, 1], dtype=torch.int32)))


def test_pack_errors():
    x = rand(4, 3, 2)
    for lengths, kw in [([2, 3, 1], {}), ([3, 2, 0], {}), ([3, 0, 0], {}), ([3, 2], {}), ([3, 2, -1], {}),
                        ([2, 3, 0], {"enforce_sorted": False}), ([[3, 2, 1]], {})]:
        raises_alike(lambda: srnn.pack_padded_sequence(T(x), tessera.tensor(lengths), **kw),
                     lambda: trnn.pack_padded_sequence(x, torch.tensor(lengths), **kw))
    raises_alike(lambda: srnn.pack_padded_sequence(tessera.zeros(0, 3, 2), [2, 1, 1]),
                 lambda: trnn.pack_padded_sequence(torch.zeros(0, 3, 2), [2, 1, 1]))
    raises_alike(lambda: srnn.pack_padded_sequence(T(x), tessera.tensor([3, 2, 1], device="meta")),
                 lambda: trnn.pack_padded_sequence(x, torch.tensor([3, 2, 1], device="meta")))
    # torch silently returns fewer rows than batch_sizes promises here; tessera refuses
    with pytest.raises(RuntimeError, match="exceeds the padded input's 4 time steps"):
        srnn.pack_padded_sequence(T(x), [5, 2, 1])
    packed = trnn.pack_padded_sequence(x, [3, 2, 1])
    raises_alike(lambda: srnn.pad_packed_sequence(srnn.pack_padded_sequence(T(x), [3, 2, 1]), total_length=2),
                 lambda: trnn.pad_packed_sequence(packed, total_length=2))
    raises_alike(lambda: srnn.PackedSequence(T(rand(3)), tessera.tensor([2, 1], device="meta")),
                 lambda: trnn.PackedSequence(rand(3), torch.tensor([2, 1], device="meta")))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence(batch_first, padding_side):
    seqs = [rand(n, 2, 3, seed=n) for n in (3, 5, 1, 5)]
    leaves_t = [s.clone().requires_grad_() for s in seqs]
    leaves_m = [T(s).requires_grad_() for s in seqs]
    out_m = srnn.pad_sequence(leaves_m, batch_first=batch_first, padding_value=2.5, padding_side=padding_side)
    if padding_side == "right":
        out_t = trnn.pad_sequence(leaves_t, batch_first=batch_first, padding_value=2.5)
    else:
        # torch 1.13 has no padding_side: left padding is right padding of the flipped sequences
        flipped = trnn.pad_sequence([s.flip(0) for s in leaves_t], batch_first=batch_first, padding_value=2.5)
        out_t = flipped.flip(1 if batch_first else 0)
    close(out_m, out_t)
    g = rand(*out_t.shape, seed=9)
    out_t.backward(g)
    out_m.backward(T(g))
    for a, b in zip(leaves_m, leaves_t):
        close(a.grad, b.grad)


def test_pad_sequence_dtypes_and_errors():
    seqs = [rand(2, 3), (rand(3, 3) * 5).long()]
    close(srnn.pad_sequence([T(s) for s in seqs]), trnn.pad_sequence(seqs))
    close(srnn.pad_sequence([T(rand(2, 3)), T(rand(3, 1))]), trnn.pad_sequence([rand(2, 3), rand(3, 1)]))
    close(srnn.pad_sequence(T(rand(3, 4))), trnn.pad_sequence(rand(3, 4)))
    raises_alike(lambda: srnn.pad_sequence([]), lambda: trnn.pad_sequence([]))
    raises_alike(lambda: srnn.pad_sequence(3), lambda: trnn.pad_sequence(3))
    with pytest.raises(RuntimeError):
        srnn.pad_sequence([T(rand(2, 3)), T(rand(3, 4))])
    with pytest.raises(ValueError, match="padding_side"):
        srnn.pad_sequence([T(rand(2))], padding_side="middle")


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_and_unpack_sequence(enforce_sorted):
    lengths = [4, 3, 3, 1] if enforce_sorted else [2, 4, 1, 3]
    seqs = [rand(n, 2, seed=10 + n) for n in lengths]
    leaves_t = [s.clone().requires_grad_() for s in seqs]
    leaves_m = [T(s).requires_grad_() for s in seqs]
    pt = trnn.pack_sequence(leaves_t, enforce_sorted=enforce_sorted)
    pm = srnn.pack_sequence(leaves_m, enforce_sorted=enforce_sorted)
    same_packed(pm, pt)
    back_t, back_m = trnn.unpack_sequence(pt), srnn.unpack_sequence(pm)
    assert len(back_m) == len(back_t) == len(seqs)
    for a, b, s in zip(back_m, back_t, seqs):
        close(a, b)
        close(a, s)
    grads = [rand(*s.shape, seed=30 + i) for i, s in enumerate(seqs)]
    torch.autograd.backward(back_t, grads)
    tessera.autograd.backward(back_m, [T(g) for g in grads])
    for a, b in zip(leaves_m, leaves_t):
        close(a.grad, b.grad)
    raises_alike(lambda: srnn.pack_sequence([T(rand(2)), T(rand(3))]),
                 lambda: trnn.pack_sequence([rand(2), rand(3)]))
    raises_alike(lambda: srnn.pack_sequence([]), lambda: trnn.pack_sequence([]))


@pytest.mark.parametrize("batch_first", [False, True])
def test_unpad_sequence(batch_first):
    padded = rand(*((3, 5) if batch_first else (5, 3)), 2, seed=4)
    lengths = torch.tensor([5, 2, 3])
    want = trnn.unpad_sequence(padded.clone(), lengths, batch_first=batch_first)
    mine_in = T(padded)
    got = srnn.unpad_sequence(mine_in, T(lengths), batch_first=batch_first)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        close(a, b)
    assert tuple(mine_in.shape) == tuple(padded.shape)  # torch 1.13 transposes its argument in place


def test_packed_sequence_class():
    pm = srnn.pack_padded_sequence(T(rand(4, 3, 2)), [2, 4, 1], enforce_sorted=False)
    pt = trnn.pack_padded_sequence(rand(4, 3, 2), [2, 4, 1], enforce_sorted=False)
    assert isinstance(pm, tuple) and len(pm) == 4 and pm._fields == pt._fields
    data, batch_sizes, sorted_indices, unsorted_indices = pm
    assert data is pm.data and batch_sizes is pm.batch_sizes
    assert srnn.invert_permutation(sorted_indices).tolist() == unsorted_indices.tolist()
    assert srnn.invert_permutation(None) is None
    assert pm.is_cuda is False
    for cast in ("float", "double", "half", "long", "int", "short", "char", "byte"):
        assert str(getattr(pm, cast)().data.dtype).split(".")[-1] == str(getattr(pt, cast)().data.dtype).split(".")[-1]
    as_float = pm.to(tessera.float32)
    assert as_float.sorted_indices.tolist() == pm.sorted_indices.tolist() and as_float.batch_sizes is pm.batch_sizes
    assert str(as_float.sorted_indices.dtype) == "tessera.int64"
    assert pm.to(tessera.float64) is pm and pm.cpu() is pm
    assert pm.to("meta").data.device.type == "meta" and pm.to("meta").sorted_indices.device.type == "meta"
    old_form = srnn.PackedSequence((pm.data, pm.batch_sizes))
    assert old_form.data is pm.data and old_form.sorted_indices is None and old_form.unsorted_indices is None
    assert srnn.PackedSequence(pm.data, pm.batch_sizes, pm.sorted_indices).unsorted_indices.tolist() == \
        pt.unsorted_indices.tolist()


def test_exports():
    assert nn.utils.rnn.pack_padded_sequence is srnn.pack_padded_sequence
    assert set(srnn.__all__) == set(trnn.__all__)


def test_pack_pad_gradcheck():
    x = T(rand(5, 3, 2, seed=6)).requires_grad_()

    def round_trip(x):
        packed = srnn.pack_padded_sequence(x, [2, 5, 3], enforce_sorted=False)
        return srnn.pad_packed_sequence(packed, total_length=6, padding_value=1.5)[0]

    assert tessera.autograd.gradcheck(round_trip, (x,))
    seqs = tuple(T(rand(n, 2, seed=n)).requires_grad_() for n in (3, 1, 4))
    assert tessera.autograd.gradcheck(lambda *s: srnn.pack_sequence(list(s), enforce_sorted=False).data, seqs)


# ---------------------------------------------------------------- the recurrent layers

def make_pair(name, *args, **kw):
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(*args, dtype=torch.float64, **kw)
    mine = getattr(nn, name)(*args, dtype=tessera.float64, **kw)
    mine.load_state_dict({k: T(v) for k, v in theirs.state_dict().items()})
    return theirs, mine


LAYER_CASES = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2, "bidirectional": True}),
    ("RNN", {"batch_first": True, "bidirectional": True, "bias": False}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("LSTM", {"bidirectional": True, "proj_size": 2}),
    ("GRU", {}),
    ("GRU", {"num_layers": 2, "bidirectional": True}),
    ("GRU", {"batch_first": True, "num_layers": 2}),
]
LENGTHS = [([5, 3, 3, 1], True), ([2, 5, 1, 4, 4], False), ([3], True)]


@pytest.mark.parametrize("name,kw", LAYER_CASES)
@pytest.mark.parametrize("lengths,enforce_sorted", LENGTHS)
@pytest.mark.parametrize("with_hx", [False, True])
def test_layers_on_packed_input(name, kw, lengths, enforce_sorted, with_hx):
    theirs, mine = make_pair(name, IN, HID, **kw)
    batch_first = kw.get("batch_first", False)
    steps, batch = max(lengths), len(lengths)
    x = rand(*((batch, steps) if batch_first else (steps, batch)), IN, seed=3)
    inputs = [x]
    if with_hx:
        dirs = (2 if kw.get("bidirectional") else 1) * kw.get("num_layers", 1)
        inputs.append(rand(dirs, batch, kw.get("proj_size") or HID, seed=4))
        if name == "LSTM":
            inputs.append(rand(dirs, batch, HID, seed=5))
    leaves_t = [t.clone().requires_grad_() for t in inputs]
    leaves_m = [T(t).requires_grad_() for t in inputs]

    def run(lib, layer, leaves):
        packed = lib.pack_padded_sequence(leaves[0], lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
        hx = None if len(leaves) == 1 else (leaves[1] if name != "LSTM" else tuple(leaves[1:]))
        out, hidden = layer(packed, hx)
        return out, (list(hidden) if name == "LSTM" else [hidden])

    out_t, hid_t = run(trnn, theirs, leaves_t)
    out_m, hid_m = run(srnn, mine, leaves_m)
    same_packed(out_m, out_t)
    for a, b in zip(hid_m, hid_t):
        close(a, b)
    # the padded output too, as users read it, then grads of everything at once
    pad_t = trnn.pad_packed_sequence(out_t, batch_first=batch_first)[0]
    pad_m = srnn.pad_packed_sequence(out_m, batch_first=batch_first)[0]
    close(pad_m, pad_t)
    grads = [rand(*a.shape, seed=40 + i) for i, a in enumerate([pad_t] + hid_t)]
    torch.autograd.backward([pad_t] + hid_t, grads)
    tessera.autograd.backward([pad_m] + hid_m, [T(g) for g in grads])
    for a, b in zip(leaves_m, leaves_t):
        close(a.grad, b.grad)
    mine_params = dict(mine.named_parameters())
    for pname, p in theirs.named_parameters():
        torch.testing.assert_close(back(mine_params[pname].grad), p.grad, **TOL, msg=pname)


def test_packed_matches_each_sequence_alone():
    # h_n of a packed batch is each sequence's own final state, bidirectional included
    _, gru = make_pair("GRU", IN, HID, bidirectional=True)
    seqs = [T(rand(n, IN, seed=n)) for n in (2, 5, 3)]
    with tessera.no_grad():
        out, h_n = gru(srnn.pack_sequence(seqs, enforce_sorted=False))
        outs = srnn.unpack_sequence(out)
        alone = [gru(s.unsqueeze(1)) for s in seqs]
    for b, (alone_out, alone_h) in enumerate(alone):
        np.testing.assert_allclose(outs[b].numpy(), alone_out[:, 0].numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(h_n[:, b].numpy(), alone_h[:, 0].numpy(), rtol=1e-12, atol=1e-12)


def test_layer_errors_on_packed_input():
    theirs, mine = make_pair("LSTM", IN, HID, num_layers=2)
    x = rand(4, 3, IN)
    pt, pm = trnn.pack_padded_sequence(x, [4, 2, 1]), srnn.pack_padded_sequence(T(x), [4, 2, 1])
    bad = [(rand(2, 2, HID), rand(2, 3, HID)), (rand(2, 3, HID), rand(1, 3, HID)), (rand(2, 3, 1), rand(2, 3, HID))]
    for h, c in bad:
        raises_alike(lambda: mine(pm, (T(h), T(c))), lambda: theirs(pt, (h, c)))
    theirs, mine = make_pair("GRU", IN, HID)
    raises_alike(lambda: mine(pm, T(rand(1, 2, HID))), lambda: theirs(pt, rand(1, 2, HID)))
    wrong_t = trnn.PackedSequence(pt.data.unsqueeze(0), pt.batch_sizes)
    wrong_m = srnn.PackedSequence(pm.data.unsqueeze(0), pm.batch_sizes)
    raises_alike(lambda: mine(wrong_m), lambda: theirs(wrong_t))


def test_dropout_and_eval_on_packed_input():
    _, lstm = make_pair("LSTM", IN, HID, num_layers=2, dropout=0.5)
    packed = srnn.pack_padded_sequence(T(rand(4, 3, IN)), [4, 2, 1])
    lstm.eval()
    with tessera.no_grad():
        a = lstm(packed)[0].data
        assert np.array_equal(a.numpy(), lstm(packed)[0].data.numpy())
        lstm.train()
        tessera.manual_seed(0)
        b = lstm(packed)[0].data
    assert tuple(b.shape) == tuple(a.shape) and not np.allclose(a.numpy(), b.numpy())
