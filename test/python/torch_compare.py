"""Small helpers the module-level tests share for running one thing in torch and in
tessera: moving values across (through numpy), comparing results, and comparing the
errors the two raise."""
import warnings

import numpy as np
import pytest
import torch

import tessera


def tt(x):
    """A tessera tensor with the values of a torch (or tessera) tensor, C-contiguous."""
    return tessera.from_numpy(np.array(x.detach().numpy(), order="C"))


def tn(x):
    """A torch tensor with the values of a tessera (or torch) tensor."""
    return torch.from_numpy(np.array(x.detach().numpy()))


def close(got, want, rtol=1e-5, atol=1e-5):
    """Values equal within tolerance, compared in numpy (either library on either side)."""
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol, atol=atol)


def close_to_torch(got, want, tol=1e-10):
    """A tessera result equal to torch's in shape and, within tol, in values."""
    assert tuple(got.shape) == tuple(want.shape)
    torch.testing.assert_close(tn(got), want, rtol=tol, atol=tol)


def rand(shape, seed):
    """float64 torch values from a seeded generator."""
    return torch.randn(*shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))


def same_error(fn_torch, fn_tessera):
    """Both raise the same exception class and message (a class named in it by module,
    tessera.x for torch.x, counts as the same; so does tessera's own class of torch's name,
    such as linalg.LinAlgError)."""
    with pytest.raises(Exception) as want:
        fn_torch()
    with pytest.raises(Exception) as got:
        fn_tessera()
    assert got.type is want.type or (got.type.__name__ == want.type.__name__ and
                                     got.type.__module__.startswith("tessera")), (got.value, want.value)
    assert str(got.value).replace("tessera.", "torch.") == str(want.value)


def outcome(fn):
    """('ok', result) or (exception type name, message), torch's spelled as tessera's."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("ok", fn())
    except Exception as e:  # noqa: BLE001  (the comparison is the point)
        return (type(e).__name__, str(e).replace("torch", "tessera"))
