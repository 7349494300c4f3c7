"""tessera.amp: automatic mixed precision, as torch.amp.

    with tessera.autocast("cpu", dtype=tessera.bfloat16):   # or tessera.float16
        loss = loss_fn(model(x), y)                          # matmuls/convs in bfloat16
    loss.backward()                                          # grads of float32 weights in float32

    scaler = tessera.amp.GradScaler("cpu")                   # float16: scale the loss
    scaler.scale(loss).backward(); scaler.step(opt); scaler.update()

autocast runs each operator on torch's lists in its list's precision (the `autocast:` field
of ops.yaml; aten/autocast); GradScaler keeps float16 gradients from underflowing.
"""
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401

__all__ = ["autocast", "custom_bwd", "custom_fwd", "GradScaler", "is_autocast_available"]
