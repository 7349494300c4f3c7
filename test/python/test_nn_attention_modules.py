"""nn.MultiheadAttention, F.multi_head_attention_forward and the Transformer modules against
torch.nn 1.13: the same weights (copied through state_dict), the same inputs and masks;
outputs, attention weights, input grads and every parameter grad; state_dict keys, reprs,
initialisation, dropout in training, and torch's errors."""
import copy

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tessera
import tessera.nn as nn
import tessera.nn.functional as F

TOL = dict(rtol=1e-9, atol=1e-10)


def rand(*shape, seed=0):
    return torch.rand(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 2 - 1


def T(t):
    """A torch tensor as a tessera tensor (own copy)."""
    return tessera.from_numpy(t.detach().numpy().copy())


def back(t):
    return torch.from_numpy(t.detach().numpy().copy())


def copy_weights(theirs, mine):
    result = mine.load_state_dict({k: T(v) for k, v in theirs.state_dict().items()})
    assert not result.missing_keys and not result.unexpected_keys


def leaves(*tensors):
    """The same values as torch and tessera leaves that take grads."""
    ours = [t.clone().requires_grad_() for t in tensors]
    mine = [T(t).requires_grad_() for t in tensors]
    return ours, mine


def check_grads(theirs, mine, torch_inputs, tessera_inputs, tol=TOL):
    for a, b in zip(torch_inputs, tessera_inputs):
        torch.testing.assert_close(back(b.grad), a.grad, **tol)
    mine_params = dict(mine.named_parameters())
    for name, p in theirs.named_parameters():
        assert (p.grad is None) == (mine_params[name].grad is None), name
        if p.grad is not None:
            torch.testing.assert_close(back(mine_params[name].grad), p.grad, **tol, msg=name)


def backward_both(out_t, out_m, seed=99):
    g = rand(*out_t.shape, seed=seed)
    out_t.backward(g)
    out_m.backward(T(g))


# ---------------------------------------------------------------- MultiheadAttention

E, H, L, S, N = 8, 2, 4, 5, 3

MHA_CASES = [
    ("plain", {}, {}),
    ("batch_first", {"batch_first": True}, {}),
    ("no_weights", {}, {"need_weights": False}),
    ("per_head_weights", {}, {"average_attn_weights": False}),
    ("bool_attn_mask", {}, {"attn_mask": "bool2d"}),
    ("float_attn_mask", {}, {"attn_mask": "float2d", "need_weights": False}),
    ("bool_3d_mask", {"batch_first": True}, {"attn_mask": "bool3d"}),
    ("float_3d_mask_no_weights", {}, {"attn_mask": "float3d", "need_weights": False}),
    ("bool_kpm", {}, {"key_padding_mask": "bool"}),
    ("float_kpm_no_weights", {"batch_first": True}, {"key_padding_mask": "float", "need_weights": False}),
    ("kpm_and_mask", {}, {"key_padding_mask": "bool", "attn_mask": "bool2d", "average_attn_weights": False}),
    ("float_mask_bool_kpm", {}, {"key_padding_mask": "bool", "attn_mask": "float2d", "need_weights": False}),
    ("kdim_vdim", {"kdim": 6, "vdim": 3}, {}),
    ("kdim_vdim_bf_masks", {"kdim": 6, "vdim": 3, "batch_first": True},
     {"key_padding_mask": "bool", "attn_mask": "bool2d", "need_weights": False}),
    ("bias_kv_zero_attn", {"add_bias_kv": True, "add_zero_attn": True}, {"key_padding_mask": "bool",
                                                                         "attn_mask": "bool2d"}),
    ("no_bias", {"bias": False}, {"need_weights": False}),
]


def _mask(kind, bsz=N, heads=H):
    if kind == "bool2d":
        m = rand(L, S, seed=11) > 0.4
        m[:, 0] = False  # no row fully masked
        return m
    if kind == "float2d":
        return rand(L, S, seed=12)
    if kind == "bool3d":
        m = rand(bsz * heads, L, S, seed=13) > 0.5
        m[..., 1] = False
        return m
    if kind == "float3d":
        return rand(bsz * heads, L, S, seed=14)
    if kind == "bool":
        m = torch.zeros(bsz, S, dtype=torch.bool)
        m[0, -2:] = True
        m[-1, 1] = True
        return m
    if kind == "float":
        return rand(bsz, S, seed=15)
    raise AssertionError(kind)


def _mha_pair(**kw):
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(E, H, dtype=torch.float64, **kw)
    mine = nn.MultiheadAttention(E, H, dtype=tessera.float64, **kw)
    copy_weights(theirs, mine)
    return theirs, mine


@pytest.mark.parametrize("name,ctor,call", MHA_CASES, ids=[c[0] for c in MHA_CASES])
def test_mha_matches_torch(name, ctor, call):
    theirs, mine = _mha_pair(**ctor)
    bf = ctor.get("batch_first", False)
    kdim, vdim = ctor.get("kdim", E), ctor.get("vdim", E)
    shape = lambda seq, dim: (N, seq, dim) if bf else (seq, N, dim)  # noqa: E731
    q, k, v = rand(*shape(L, E), seed=1), rand(*shape(S, kdim), seed=2), rand(*shape(S, vdim), seed=3)
    kw_t = {key: (_mask(val) if key in ("attn_mask", "key_padding_mask") else val) for key, val in call.items()}
    kw_m = {key: (T(val) if isinstance(val, torch.Tensor) else val) for key, val in kw_t.items()}
    (tq, tk, tv), (mq, mk, mv) = leaves(q, k, v)
    out_t, w_t = theirs(tq, tk, tv, **kw_t)
    if name == "float_mask_bool_kpm":  # current torch deprecates mixing mask types
        with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn_mask"):
            out_m, w_m = mine(mq, mk, mv, **kw_m)
    else:
        out_m, w_m = mine(mq, mk, mv, **kw_m)
    torch.testing.assert_close(back(out_m), out_t, **TOL)
    if w_t is None:
        assert w_m is None
    else:
        torch.testing.assert_close(back(w_m), w_t, **TOL)
    backward_both(out_t, out_m)
    check_grads(theirs, mine, (tq, tk, tv), (mq, mk, mv))


@pytest.mark.parametrize("batch_first", [False, True])
def test_mha_self_attention_same_tensor(batch_first):
    theirs, mine = _mha_pair(batch_first=batch_first)
    (x,), (mx,) = leaves(rand(*((N, L, E) if batch_first else (L, N, E)), seed=4))
    out_t, w_t = theirs(x, x, x, key_padding_mask=_mask("bool")[:, :L])
    out_m, w_m = mine(mx, mx, mx, key_padding_mask=T(_mask("bool")[:, :L]))
    torch.testing.assert_close(back(out_m), out_t, **TOL)
    torch.testing.assert_close(back(w_m), w_t, **TOL)
    backward_both(out_t, out_m)
    check_grads(theirs, mine, (x,), (mx,))


@pytest.mark.parametrize("call", [{}, {"need_weights": False}, {"average_attn_weights": False},
                                  {"key_padding_mask": "kpm1d", "attn_mask": "heads3d"}])
def test_mha_unbatched(call):
    theirs, mine = _mha_pair(kdim=6, vdim=6)
    (q, k, v), (mq, mk, mv) = leaves(rand(L, E, seed=5), rand(S, 6, seed=6), rand(S, 6, seed=7))
    kw_t = dict(call)
    if "key_padding_mask" in call:
        kw_t["key_padding_mask"] = torch.tensor([False, True, False, False, True])
        kw_t["attn_mask"] = rand(H, L, S, seed=8) > 0.6
        kw_t["attn_mask"][..., 0] = False
    kw_m = {key: (T(val) if isinstance(val, torch.Tensor) else val) for key, val in kw_t.items()}
    out_t, w_t = theirs(q, k, v, **kw_t)
    out_m, w_m = mine(mq, mk, mv, **kw_m)
    assert tuple(out_m.shape) == tuple(out_t.shape) == (L, E)
    torch.testing.assert_close(back(out_m), out_t, **TOL)
    if w_t is not None:
        torch.testing.assert_close(back(w_m), w_t, **TOL)
    backward_both(out_t, out_m)
    check_grads(theirs, mine, (q, k, v), (mq, mk, mv))


def test_mha_eval_mode_turns_dropout_off():
    theirs, mine = _mha_pair(dropout=0.5)
    theirs.eval()
    mine.eval()
    q = rand(L, N, E, seed=9)
    for need in (True, False):
        out_t, _ = theirs(q, q, q, need_weights=need)
        out_m, _ = mine(T(q), T(q), T(q), need_weights=need)
        torch.testing.assert_close(back(out_m), out_t, **TOL)


def test_mha_dropout_in_training():
    _, mine = _mha_pair(dropout=0.5)
    q = T(rand(L, N, E, seed=10))
    mine.eval()
    _, w_eval = mine(q, q, q, average_attn_weights=False)
    out_eval, _ = mine(q, q, q, need_weights=False)
    mine.train()
    tessera.manual_seed(3)
    _, w_train = mine(q, q, q, average_attn_weights=False)
    # each weight is dropped (0) or kept and scaled by 1 / (1 - p)
    w_eval, w_train = w_eval.detach().numpy(), w_train.detach().numpy()
    kept = w_train != 0
    assert 0 < kept.mean() < 1
    np.testing.assert_allclose(w_train[kept], 2 * w_eval[kept], rtol=1e-12)
    out_train, _ = mine(q, q, q, need_weights=False)
    assert not np.allclose(out_train.detach().numpy(), out_eval.detach().numpy())
    out_train.sum().backward()
    assert mine.in_proj_weight.grad is not None


def test_mha_is_causal_hint():
    theirs, mine = _mha_pair()
    q = rand(L, N, E, seed=16)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(L)
    out_t, _ = theirs(q, q, q, attn_mask=mask, need_weights=False)
    for need in (False, True):
        out_m, _ = mine(T(q), T(q), T(q), attn_mask=T(mask), need_weights=need, is_causal=True)
        torch.testing.assert_close(back(out_m), out_t, **TOL)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        mine(T(q), T(q), T(q), is_causal=True)


def test_functional_mha_with_static_kv():
    theirs, mine = _mha_pair()
    q = rand(L, N, E, seed=17)
    static_k, static_v = rand(N * H, S, E // H, seed=18), rand(N * H, S, E // H, seed=19)
    args_t = (E, H, theirs.in_proj_weight, theirs.in_proj_bias, None, None, False, 0.0, theirs.out_proj.weight,
              theirs.out_proj.bias)
    args_m = (E, H, mine.in_proj_weight, mine.in_proj_bias, None, None, False, 0.0, mine.out_proj.weight,
              mine.out_proj.bias)
    out_t, w_t = TF.multi_head_attention_forward(q, q, q, *args_t, static_k=static_k, static_v=static_v)
    out_m, w_m = F.multi_head_attention_forward(T(q), T(q), T(q), *args_m, static_k=T(static_k),
                                                static_v=T(static_v))
    torch.testing.assert_close(back(out_m), out_t, **TOL)
    torch.testing.assert_close(back(w_m), w_t, **TOL)


def test_mha_parameters_init_state_dict_and_repr():
    for kw in ({}, {"kdim": 6, "vdim": 3}, {"add_bias_kv": True, "bias": False}, {"batch_first": True}):
        theirs = torch.nn.MultiheadAttention(E, H, **kw)
        mine = nn.MultiheadAttention(E, H, **kw)
        assert list(mine.state_dict()) == list(theirs.state_dict())
        assert [(n, tuple(p.shape)) for n, p in mine.named_parameters()] == \
               [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
        assert repr(mine) == repr(theirs)
    mine = nn.MultiheadAttention(16, 4)
    bound = (6 / (16 + 48)) ** 0.5
    w = mine.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert not mine.in_proj_bias.detach().numpy().any() and not mine.out_proj.bias.detach().numpy().any()
    assert mine.bias_k is None and "bias_k" not in dict(mine.named_parameters())


def test_mha_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(6, 4)
    mine = nn.MultiheadAttention(E, H)
    x = tessera.randn(L, N, E)
    with pytest.raises(AssertionError, match="query should be unbatched 2D or batched 3D tensor"):
        mine(x.unsqueeze(0), x.unsqueeze(0), x.unsqueeze(0))
    with pytest.raises(AssertionError, match="expected `key` and `value` to be 3-D"):
        mine(x, x[0], x[0])
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is .*, but should be \(4, 4\)"):
        mine(x, x, x, attn_mask=tessera.zeros(3, 4))
    with pytest.raises(RuntimeError, match="The shape of the 3D attn_mask"):
        mine(x, x, x, attn_mask=tessera.zeros(N, L, L))
    with pytest.raises(AssertionError, match="only bool and floating types of key_padding_mask are supported"):
        mine(x, x, x, key_padding_mask=tessera.zeros(N, L, dtype=tessera.int64))
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 8, but got 4"):
        mine(x[..., :4], x[..., :4], x[..., :4])


# ---------------------------------------------------------------- Transformer layers

D, NH, FF = 8, 2, 12


def _pair(torch_cls, tessera_cls, *args, **kw):
    torch.manual_seed(0)
    theirs = torch_cls(*args, dtype=torch.float64, **kw)
    mine = tessera_cls(*args, dtype=tessera.float64, **kw)
    copy_weights(theirs, mine)
    theirs.eval()
    mine.eval()
    return theirs, mine


def _bool_causal(s):
    """True above the diagonal: the bool form of generate_square_subsequent_mask (bool masks
    go with bool key padding masks; current torch deprecates mixing the two types)."""
    return torch.ones(s, s, dtype=torch.bool).triu(1)


def _bool_kpm(n, s):
    m = torch.zeros(n, s, dtype=torch.bool)
    m[0, -1] = True
    m[-1, -2:] = True  # key 0 stays visible: no row is fully masked under a causal mask
    return m


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation,batch_first,masks", [
    ("relu", False, False), ("gelu", True, True), ("relu", False, True),
])
def test_encoder_layer_matches_torch(norm_first, activation, batch_first, masks):
    theirs, mine = _pair(torch.nn.TransformerEncoderLayer, nn.TransformerEncoderLayer, D, NH, FF, dropout=0.1,
                         activation=activation, batch_first=batch_first, norm_first=norm_first)
    assert repr(mine) == repr(theirs)
    src = rand(*((N, S, D) if batch_first else (S, N, D)), seed=20)
    kw = {}
    if masks:
        kw = {"src_mask": _bool_causal(S), "src_key_padding_mask": _bool_kpm(N, S)}
    (ts,), (ms,) = leaves(src)
    out_t = theirs(ts, **kw)
    out_m = mine(ms, **{k: T(v) for k, v in kw.items()})
    torch.testing.assert_close(back(out_m), out_t, **TOL)
    backward_both(out_t, out_m)
    check_grads(theirs, mine, (ts,), (ms,))


def test_encoder_layer_callable_activation_unbatched_and_bool_mask():
    theirs = torch.nn.TransformerEncoderLayer(D, NH, FF, activation=torch.tanh, dtype=torch.float64)
    mine = nn.TransformerEncoderLayer(D, NH, FF, activation=tessera.tanh, dtype=tessera.float64)
    copy_weights(theirs, mine)
    theirs.eval()
    mine.eval()
    mask = rand(S, S, seed=21) > 0.3
    mask.fill_diagonal_(False)
    (src,), (msrc,) = leaves(rand(S, D, seed=22))
    out_t = theirs(src, src_mask=mask)
    out_m = mine(msrc, src_mask=T(mask))
    torch.testing.assert_close(back(out_m), out_t, **TOL)
    backward_both(out_t, out_m)
    check_grads(theirs, mine, (src,), (msrc,))


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_layer_matches_torch(norm_first, batch_first):
    theirs, mine = _pair(torch.nn.TransformerDecoderLayer, nn.TransformerDecoderLayer, D, NH, FF,
                         activation="gelu", batch_first=batch_first, norm_first=norm_first)
    assert repr(mine) == repr(theirs)
    shape = lambda s: (N, s, D) if batch_first else (s, N, D)  # noqa: E731
    (tgt, mem), (mtgt, mmem) = leaves(rand(*shape(L), seed=23), rand(*shape(S), seed=24))
    memory_mask = rand(L, S, seed=25) > 0.5
    memory_mask[:, 0] = False
    kw = {"tgt_mask": _bool_causal(L), "memory_mask": memory_mask,
          "tgt_key_padding_mask": _bool_kpm(N, L), "memory_key_padding_mask": _bool_kpm(N, S)}
    out_t = theirs(tgt, mem, **kw)
    out_m = mine(mtgt, mmem, **{k: T(v) for k, v in kw.items()})
    torch.testing.assert_close(back(out_m), out_t, **TOL)
    backward_both(out_t, out_m)
    check_grads(theirs, mine, (tgt, mem), (mtgt, mmem))


def test_encoder_and_decoder_stacks():
    torch.manual_seed(0)
    t_enc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(D, NH, FF, dtype=torch.float64), 2,
                                        norm=torch.nn.LayerNorm(D, dtype=torch.float64))
    layer = nn.TransformerEncoderLayer(D, NH, FF, dtype=tessera.float64)
    m_enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(D, dtype=tessera.float64))
    # the layers are deep copies: separate parameters, none shared with the prototype
    p0, p1 = m_enc.layers[0].linear1.weight, m_enc.layers[1].linear1.weight
    assert p0 is not p1 and p0 is not layer.linear1.weight and isinstance(p0, nn.Parameter)
    np.testing.assert_array_equal(p0.detach().numpy(), p1.detach().numpy())
    assert list(m_enc.state_dict()) == list(t_enc.state_dict())
    assert "(0-1): 2 x TransformerEncoderLayer(" in repr(m_enc)
    copy_weights(t_enc, m_enc)
    t_enc.eval()
    m_enc.eval()
    src = rand(S, N, D, seed=26)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(S).double()
    (ts,), (ms,) = leaves(src)
    mem_t = t_enc(ts, mask=_bool_causal(S), src_key_padding_mask=_bool_kpm(N, S))
    mem_m = m_enc(ms, mask=T(_bool_causal(S)), src_key_padding_mask=T(_bool_kpm(N, S)))
    torch.testing.assert_close(back(mem_m), mem_t, **TOL)
    # a causal mask alone takes the attention kernel's causal path: same values
    torch.testing.assert_close(back(m_enc(ms, mask=T(mask))), t_enc(ts, mask=mask), **TOL)

    t_dec = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(D, NH, FF, dtype=torch.float64), 2,
                                        norm=torch.nn.LayerNorm(D, dtype=torch.float64))
    m_dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(D, NH, FF, dtype=tessera.float64), 2,
                                  norm=nn.LayerNorm(D, dtype=tessera.float64))
    assert list(m_dec.state_dict()) == list(t_dec.state_dict())
    copy_weights(t_dec, m_dec)
    t_dec.eval()
    m_dec.eval()
    (tgt,), (mtgt,) = leaves(rand(L, N, D, seed=27))
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(L).double()
    out_t = t_dec(tgt, mem_t, tgt_mask=tmask, memory_key_padding_mask=_bool_kpm(N, S))
    out_m = m_dec(mtgt, mem_m, tgt_mask=T(tmask), memory_key_padding_mask=T(_bool_kpm(N, S)))
    torch.testing.assert_close(back(out_m), out_t, **TOL)
    backward_both(out_t, out_m)
    check_grads(t_enc, m_enc, (ts,), (ms,))
    check_grads(t_dec, m_dec, (tgt,), (mtgt,))


@pytest.mark.parametrize("batch_first,norm_first", [(False, False), (True, True)])
def test_transformer_matches_torch(batch_first, norm_first):
    kw = dict(d_model=D, nhead=NH, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=FF,
              batch_first=batch_first, norm_first=norm_first)
    torch.manual_seed(0)
    theirs = torch.nn.Transformer(dtype=torch.float64, **kw)
    mine = nn.Transformer(dtype=tessera.float64, **kw)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    # _reset_parameters: every matrix Xavier-uniform, vectors left as their layers made them
    w = mine.encoder.layers[0].linear1.weight.detach().numpy()
    assert np.abs(w).max() <= (6 / (D + FF)) ** 0.5
    np.testing.assert_array_equal(mine.encoder.norm.weight.detach().numpy(), np.ones(D))
    copy_weights(theirs, mine)
    theirs.eval()
    mine.eval()
    shape = lambda s: (N, s, D) if batch_first else (s, N, D)  # noqa: E731
    (src, tgt), (msrc, mtgt) = leaves(rand(*shape(S), seed=28), rand(*shape(L), seed=29))
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(L).double()
    out_t = theirs(src, tgt, tgt_mask=tmask, src_key_padding_mask=_bool_kpm(N, S))
    out_m = mine(msrc, mtgt, tgt_mask=T(tmask), src_key_padding_mask=T(_bool_kpm(N, S)))
    torch.testing.assert_close(back(out_m), out_t, **TOL)
    backward_both(out_t, out_m)
    check_grads(theirs, mine, (src, tgt), (msrc, mtgt))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        mine(msrc[..., :4], mtgt)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        mine(msrc, mtgt[:1] if batch_first else mtgt[:, :1])


def test_generate_square_subsequent_mask():
    torch.testing.assert_close(back(nn.Transformer.generate_square_subsequent_mask(5)),
                               torch.nn.Transformer.generate_square_subsequent_mask(5))
    assert nn.Transformer.generate_square_subsequent_mask(3, dtype=tessera.float64).dtype == tessera.float64


def test_transformer_layer_without_bias_equals_zero_biases():
    """bias=False (current torch) computes what torch 1.13 does with every bias zero."""
    torch.manual_seed(0)
    theirs = torch.nn.TransformerEncoderLayer(D, NH, FF, dtype=torch.float64).eval()
    mine = nn.TransformerEncoderLayer(D, NH, FF, bias=False, dtype=tessera.float64).eval()
    assert all("bias" not in name for name, _ in mine.named_parameters())
    with torch.no_grad():
        for name, p in theirs.named_parameters():
            if "bias" in name:
                p.zero_()
    mine.load_state_dict({k: T(v) for k, v in theirs.state_dict().items() if "bias" not in k})
    src = rand(S, N, D, seed=30)
    torch.testing.assert_close(back(mine(T(src))), theirs(src), **TOL)


def test_transformer_dropout_in_training():
    layer = nn.TransformerEncoderLayer(D, NH, FF, dropout=0.5, dtype=tessera.float64)
    src = T(rand(S, N, D, seed=31))
    layer.eval()
    ref = layer(src).detach().numpy()
    layer.train()
    assert not np.allclose(layer(src).detach().numpy(), ref)
    no_drop = nn.TransformerEncoderLayer(D, NH, FF, dropout=0.0, dtype=tessera.float64)
    no_drop.load_state_dict(layer.state_dict())
    np.testing.assert_allclose(no_drop.train()(src).detach().numpy(), ref, rtol=1e-12, atol=1e-12)


def test_mixed_mask_types_warn_as_current_torch():
    layer = nn.TransformerEncoderLayer(D, NH, FF).eval()
    src = tessera.randn(S, N, D)
    float_mask = nn.Transformer.generate_square_subsequent_mask(S)
    with pytest.warns(UserWarning, match="Support for mismatched src_key_padding_mask and src_mask is deprecated"):
        mixed = layer(src, src_mask=float_mask, src_key_padding_mask=T(_bool_kpm(N, S)))
    same = layer(src, src_mask=T(_bool_causal(S)), src_key_padding_mask=T(_bool_kpm(N, S)))
    np.testing.assert_allclose(mixed.detach().numpy(), same.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_transformer_deepcopy_and_errors():
    layer = nn.TransformerDecoderLayer(D, NH, FF)
    clone = copy.deepcopy(layer)
    assert clone.self_attn.in_proj_weight is not layer.self_attn.in_proj_weight
    with tessera.no_grad():
        clone.linear1.weight.fill_(0.0)
    assert layer.linear1.weight.detach().numpy().any()
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(D, NH, activation="tanh")


def test_float32_layers():
    torch.manual_seed(0)
    theirs = torch.nn.TransformerDecoderLayer(D, NH, FF, batch_first=True).eval()
    mine = nn.TransformerDecoderLayer(D, NH, FF, batch_first=True).eval()
    copy_weights(theirs, mine)
    tgt, mem = rand(N, L, D, seed=32).float(), rand(N, S, D, seed=33).float()
    out_m = mine(T(tgt), T(mem), tgt_mask=T(_bool_causal(L)))
    assert out_m.dtype == tessera.float32
    torch.testing.assert_close(back(out_m), theirs(tgt, mem, tgt_mask=_bool_causal(L)), rtol=1e-5, atol=1e-5)
    out_t, w_t = theirs.self_attn(tgt, mem, mem)
    out_m, w_m = mine.self_attn(T(tgt), T(mem), T(mem))
    torch.testing.assert_close(back(out_m), out_t, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(back(w_m), w_t, rtol=1e-5, atol=1e-6)
