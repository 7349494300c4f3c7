"""nn.functional.multi_head_attention_forward: the math of nn.MultiheadAttention (input
projections, bias_k/bias_v, zero attention, masks, heads, output projection) in tensor
ops, re-exported by tessera.nn.functional."""
import math
import warnings

import tessera as _t
from tessera._C import _nn

__all__ = ["multi_head_attention_forward"]


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, _t.Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask becomes an additive float mask (-inf where True); float masks pass.
    Current torch rejects integer masks (1.13 still took uint8 with a warning)."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != _t.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.")
    if not is_float:
        mask = _t.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """True for batched (3-D) query, False for unbatched (2-D); asserts the rest agrees."""
    if query.dim() == 3:
        assert key.dim() == 3 and value.dim() == 3, (
            "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
            f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None:
            assert key_padding_mask.dim() == 2, (
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but found "
                f"{key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            assert attn_mask.dim() in (2, 3), (
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                f"{attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        assert key.dim() == 2 and value.dim() == 2, (
            "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
            f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None:
            assert key_padding_mask.dim() == 1, (
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but found "
                f"{key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            assert attn_mask.dim() in (2, 3), (
                "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                f"{attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                assert tuple(attn_mask.shape) == expected, (
                    f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _in_projection_packed(q, k, v, w, b=None):
    """q, k, v through the stacked (3E, E) weight; shares one matmul when the inputs are
    the same tensor (self-attention) or key is value (encoder-decoder attention)."""
    E = q.size(-1)
    if k is v:
        if q is k:
            return _t.linear(q, w, b).chunk(3, -1)
        w_q, w_kv = w.split([E, 2 * E])
        b_q, b_kv = (None, None) if b is None else b.split([E, 2 * E])
        return (_t.linear(q, w_q, b_q),) + tuple(_t.linear(k, w_kv, b_kv).chunk(2, -1))
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return _t.linear(q, w_q, b_q), _t.linear(k, w_k, b_k), _t.linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for name, w, want in (("q", w_q, (Eq, Eq)), ("k", w_k, (Eq, Ek)), ("v", w_v, (Eq, Ev))):
        assert tuple(w.shape) == want, f"expecting {name} weights shape of {want}, but got {tuple(w.shape)}"
    for name, bias in (("q", b_q), ("k", b_k), ("v", b_v)):
        assert bias is None or tuple(bias.shape) == (Eq,), \
            f"expecting {name} bias shape of {(Eq,)}, but got {tuple(bias.shape)}"
    return _t.linear(q, w_q, b_q), _t.linear(k, w_k, b_k), _t.linear(v, w_v, b_v)


def _check_attn_mask_shape(attn_mask, tgt_len, src_len, bsz, num_heads):
    """A 2-D mask gets a leading 1 to broadcast over batch*heads; a 3-D one must be per head."""
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                               f"{(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                               f"{(bsz * num_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _heads_first(x, static, bsz, num_heads, head_dim, name):
    """(S, N, E) -> (N * heads, S, head_dim), or the given static key/value after checks."""
    if static is None:
        return x.contiguous().view(x.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    assert static.size(0) == bsz * num_heads, \
        f"expecting {name}.size(0) of {bsz * num_heads}, but got {static.size(0)}"
    assert static.size(2) == head_dim, f"expecting {name}.size(2) of {head_dim}, but got {static.size(2)}"
    return static


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight,
                                 out_proj_bias, training=True, key_padding_mask=None, need_weights=True,
                                 attn_mask=None, use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None, static_v=None,
                                 average_attn_weights=True, is_causal=False):
    """Multi-head attention on sequence-first (L, N, E) or unbatched (L, E) inputs; returns
    (output, weights averaged over heads / per head, or None when need_weights=False)."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)

    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask),
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                           "module method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        # The causal hint stands in for the mask: the attention kernel masks by itself.
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            # the merged mask below is no longer purely causal
            is_causal = False

    assert embed_dim == embed_dim_to_check, \
        f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
    head_dim = embed_dim // num_heads
    assert head_dim * num_heads == embed_dim, f"embed_dim {embed_dim} not divisible by num_heads {num_heads}"
    if use_separate_proj_weight:
        assert key.shape[:2] == value.shape[:2], \
            f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}"
    else:
        assert key.shape == value.shape, f"key shape {key.shape} does not match value shape {value.shape}"

    if not use_separate_proj_weight:
        assert in_proj_weight is not None, "use_separate_proj_weight is False but in_proj_weight is None"
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        assert q_proj_weight is not None, "use_separate_proj_weight is True but q_proj_weight is None"
        assert k_proj_weight is not None, "use_separate_proj_weight is True but k_proj_weight is None"
        assert v_proj_weight is not None, "use_separate_proj_weight is True but v_proj_weight is None"
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)

    if attn_mask is not None:
        attn_mask = _check_attn_mask_shape(attn_mask, tgt_len, src_len, bsz, num_heads)

    if bias_k is not None and bias_v is not None:
        assert static_k is None, "bias cannot be added to static key."
        assert static_v is None, "bias cannot be added to static value."
        k = _t.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _t.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _nn.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = _nn.pad(key_padding_mask, (0, 1))
    else:
        assert bias_k is None
        assert bias_v is None

    q = q.contiguous().view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads_first(k, static_k, bsz, num_heads, head_dim, "static_k")
    v = _heads_first(v, static_v, bsz, num_heads, head_dim, "static_v")

    if add_zero_attn:
        zeros = (bsz * num_heads, 1, head_dim)
        k = _t.cat([k, _t.zeros(zeros, dtype=k.dtype, device=k.device)], 1)
        v = _t.cat([v, _t.zeros(zeros, dtype=v.dtype, device=v.device)], 1)
        if attn_mask is not None:
            attn_mask = _nn.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = _nn.pad(key_padding_mask, (0, 1))

    src_len = k.size(1)
    if key_padding_mask is not None:
        assert tuple(key_padding_mask.shape) == (bsz, src_len), \
            f"expecting key_padding_mask shape of {(bsz, src_len)}, but got {key_padding_mask.shape}"
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1) \
            .reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights or _t.onnx.is_in_onnx_export():
        # The weights are wanted: form the (N*heads, L, S) matrix explicitly. (An ONNX export
        # takes this path too, torch 1.13's only one, so that the graph is the one torch
        # writes.)
        assert not (is_causal and attn_mask is None), "FIXME: is_causal not implemented for need_weights"
        q_scaled = q / math.sqrt(head_dim)
        if attn_mask is not None:
            weights = _t.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = _t.bmm(q_scaled, k.transpose(-2, -1))
        weights = weights.softmax(-1)
        if dropout_p > 0.0:
            weights = _t.dropout(weights, dropout_p, True)
        out = _t.bmm(weights, v)
        out = out.transpose(0, 1).contiguous().view(tgt_len * bsz, embed_dim)
        out = _t.linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.size(1))
        if not need_weights:
            return (out if is_batched else out.squeeze(1)), None
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    # No weights: the fused attention kernel, heads as a batch dimension.
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = _nn.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).contiguous().view(bsz * tgt_len, embed_dim)
    out = _t.linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
    if not is_batched:
        out = out.squeeze(1)
    return out, None
