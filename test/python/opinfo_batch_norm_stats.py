"""OpInfo entries for SyncBatchNorm's pieces (aten/native/nn/BatchNormStats.cpp).

torch implements batch_norm_stats, _elemt, _gather_stats(_with_counts), _backward_reduce
and _backward_elemt on CUDA only (1.13 and current PyTorch alike), so on torch's side each
entry computes the operator's definition with torch's own operators: the statistics from
torch.var_mean, the merged variance as E[x^2] - mean^2 over the shards (tessera merges
squared deviations, Chan's form), the normalisation and its gradient written out as
torch's CUDA kernels define them. batch_norm_update_stats has a CPU kernel in torch and is
compared with it. test_distributed_training.py checks the pieces together against torch's
BatchNorm on the whole batch."""
import torch

from opinfo import OpInfo, make_torch, register

FLOAT = ("float32", "float64")


def T(shape, dtype, seed, low=-2.0, high=2.0):
    return make_torch(shape, dtype, seed, low, high)


def _dims(x):
    return [0] + list(range(2, x.dim()))


def _ch(t, x):
    return t.reshape([1, -1] + [1] * (x.dim() - 2))


def entry(name, call, samples, **kw):
    kw.setdefault("dtypes", FLOAT)
    kw.setdefault("supports_out", False)
    kw.setdefault("rtol", 1e-5)
    kw.setdefault("atol", 1e-5)
    return OpInfo(name, call, sample_inputs=samples, **kw)


def inputs(dtype):
    yield "2-D", [T((5, 3), dtype, 1)], {}
    yield "3-D eps", [T((2, 3, 4), dtype, 2)], {"eps": 0.1}
    yield "4-D transposed", [T((2, 3, 2, 3), dtype, 3).transpose(2, 3)], {}


def stats_call(lib, x, eps=1e-5):
    if lib is torch:
        var, mean = torch.var_mean(x, _dims(x), unbiased=False)
        return mean, (var + eps).rsqrt()
    return lib.batch_norm_stats(x, eps)


def elemt_samples(dtype):
    x = T((3, 2, 4), dtype, 1)
    mean, invstd = T((2,), dtype, 2), T((2,), dtype, 3, 0.5, 2.0)
    yield "affine", [x, T((2,), dtype, 4, 0.5, 2.0), T((2,), dtype, 5), mean, invstd], {}
    yield "plain 2-D", [T((4, 3), dtype, 6), T((3,), dtype, 7), T((3,), dtype, 8, 0.5, 2.0)], {}


def elemt_call(lib, x, *rest, out=None):
    w, b, mean, invstd = rest if len(rest) == 4 else (None, None) + tuple(rest)
    if lib is torch:
        y = (x - _ch(mean, x)) * _ch(invstd, x)
        y = y * _ch(w, x) + _ch(b, x) if w is not None else y
        return y if out is None else out.resize_(y.shape).copy_(y)
    if out is not None:
        return lib.batch_norm_elemt(x, w, b, mean, invstd, 1e-5, out=out)
    return lib.batch_norm_elemt(x, w, b, mean, invstd, 1e-5)


def gather_samples(dtype):
    mean, invstd = T((3, 2), dtype, 1), T((3, 2), dtype, 2, 0.5, 2.0)
    yield "counts", [T((4, 2), dtype, 3), mean, invstd, torch.tensor([2.0, 5.0, 3.0], dtype=getattr(torch, dtype))], {}
    yield "running stats", [T((4, 2), dtype, 4), mean, invstd, torch.tensor([4.0, 1.0, 6.0], dtype=getattr(torch, dtype)),
                            T((2,), dtype, 5), T((2,), dtype, 6, 0.5, 2.0)], {"momentum": 0.3}


def gather_call(lib, x, mean, invstd, counts, *running, momentum=0.1, eps=1e-5):
    # running statistics are buffers that the op moves: fresh copies for every call (their
    # new values are compared in test_distributed_training.py; as outputs here gradcheck
    # would differentiate them)
    rm, rv = [r.clone() for r in running] if running else (None, None)
    if lib is torch:
        n_i = counts.reshape(-1, 1)
        n = n_i.sum()
        merged = (n_i * mean).sum(0) / n
        second_moment = (n_i * (invstd.pow(-2) - eps + mean * mean)).sum(0) / n
        var = second_moment - merged * merged
        if rm is not None:
            with torch.no_grad():
                rm.mul_(1 - momentum).add_(momentum * merged)
                rv.mul_(1 - momentum).add_(momentum * var * n / (n - 1))
        out = (merged, (var + eps).rsqrt())
    else:
        out = lib.batch_norm_gather_stats_with_counts(x, mean, invstd, rm, rv, momentum, eps, counts)
    return out


def gather_equal_call(lib, x, mean, invstd, count=4):
    if lib is torch:
        return gather_call(torch, x, mean, invstd, torch.full((mean.shape[0],), float(count), dtype=mean.dtype))
    return lib.batch_norm_gather_stats(x, mean, invstd, None, None, 0.1, 1e-5, count)


def reduce_samples(dtype):
    x = T((3, 2, 4), dtype, 1)
    yield "all", [T((3, 2, 4), dtype, 2), x, T((2,), dtype, 3), T((2,), dtype, 4, 0.5, 2.0), T((2,), dtype, 5)], {}
    yield "input only", [T((5, 3), dtype, 6), T((5, 3), dtype, 7), T((3,), dtype, 8), T((3,), dtype, 9, 0.5, 2.0),
                         T((3,), dtype, 10)], {"weight_g": False, "bias_g": False}
    yield "weight and bias only", [T((2, 2, 3), dtype, 11), T((2, 2, 3), dtype, 12), T((2,), dtype, 13),
                                   T((2,), dtype, 14, 0.5, 2.0), T((2,), dtype, 15)], {"input_g": False}


def reduce_call(lib, dy, x, mean, invstd, w, input_g=True, weight_g=True, bias_g=True):
    if lib is torch:
        sum_dy = dy.sum(_dims(x))
        sum_dy_xmu = (dy * (x - _ch(mean, x))).sum(_dims(x))
        return (sum_dy if input_g else None, sum_dy_xmu if input_g else None,
                sum_dy_xmu * invstd if weight_g else None, sum_dy if bias_g else None)
    return lib.batch_norm_backward_reduce(dy, x, mean, invstd, w, input_g, weight_g, bias_g)


def backward_elemt_samples(dtype):
    counts = torch.tensor([3, 5], dtype=torch.int32)
    yield "affine", [T((3, 2, 4), dtype, 1), T((3, 2, 4), dtype, 2), T((2,), dtype, 3), T((2,), dtype, 4, 0.5, 2.0),
                     T((2,), dtype, 5, 0.5, 2.0), T((2,), dtype, 6), T((2,), dtype, 7), counts], {}
    yield "no weight", [T((4, 3), dtype, 8), T((4, 3), dtype, 9), T((3,), dtype, 10), T((3,), dtype, 11, 0.5, 2.0),
                        T((3,), dtype, 12), T((3,), dtype, 13), counts], {}


def backward_elemt_call(lib, dy, x, mean, invstd, *rest):
    w, sum_dy, sum_dy_xmu, count = rest if len(rest) == 4 else (None,) + tuple(rest)
    if lib is torch:
        total = count.sum().to(mean.dtype)
        mean_dy, mean_dy_xmu = sum_dy / total, sum_dy_xmu / total
        scale = invstd * w if w is not None else invstd
        return (dy - _ch(mean_dy, x) - (x - _ch(mean, x)) * _ch(invstd * invstd * mean_dy_xmu, x)) * _ch(scale, x)
    return lib.batch_norm_backward_elemt(dy, x, mean, invstd, w, sum_dy, sum_dy_xmu, count)


def update_stats_samples(dtype):
    yield "running stats", [T((5, 3), dtype, 1), T((3,), dtype, 2), T((3,), dtype, 3, 0.5, 2.0)], {"momentum": 0.2}
    yield "none", [T((2, 3, 4), dtype, 4)], {}


def update_stats_call(lib, x, *running, momentum=0.1):
    rm, rv = [r.clone() for r in running] if running else (None, None)
    return lib.batch_norm_update_stats(x, rm, rv, momentum)


register(
    entry("batch_norm_stats", stats_call, inputs),
    entry("batch_norm_elemt", elemt_call, elemt_samples, supports_out=True),
    entry("batch_norm_gather_stats_with_counts", gather_call, gather_samples, no_grad_inputs=(3, 4, 5)),
    entry("batch_norm_gather_stats", gather_equal_call,
          lambda dtype: [("equal counts", [T((4, 2), dtype, 1), T((3, 2), dtype, 2), T((3, 2), dtype, 3, 0.5, 2.0)],
                          {})]),
    entry("batch_norm_backward_reduce", reduce_call, reduce_samples),
    entry("batch_norm_backward_elemt", backward_elemt_call, backward_elemt_samples),
    entry("batch_norm_update_stats", update_stats_call, update_stats_samples, no_grad_inputs=(1, 2),
          exempt={"torch_grad": "torch's batch_norm_update_stats records a Node that is not implemented; tessera "
                                "differentiates the mean and biased variance it returns (var_mean's formulas)"}),
)
