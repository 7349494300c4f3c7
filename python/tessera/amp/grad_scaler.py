"""GradScaler (current torch.amp.GradScaler, CPU form): dynamic loss scaling for float16.

float16 gradients underflow to zero below ~6e-8. The scaler multiplies the loss by a large
factor before backward, divides the gradients by it before the optimizer step (skipping
the step when any gradient overflowed to inf/NaN), and adapts the factor: halved after an
overflow, doubled after growth_interval clean steps. The per-step work is two operators,
_amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_, which keep the scale
in a tensor so a step reads one value back (whether to skip)."""
import collections
import collections.abc
import enum
import warnings

import tessera

__all__ = ["GradScaler", "OptState"]


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class _MultiDeviceReplicator:
    """One tensor, copied lazily to each device that asks for it."""

    def __init__(self, master):
        self.master = master
        self._per_device_tensors = {}

    def get(self, device):
        retval = self._per_device_tensors.get(device, None)
        if retval is None:
            retval = self.master.to(device=device, non_blocking=True, copy=True)
            self._per_device_tensors[device] = retval
        return retval


class GradScaler:
    """Scales a loss up before backward and its gradients down before the step.

        scaler = tessera.amp.GradScaler("cpu")
        with tessera.autocast("cpu", dtype=tessera.float16):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)     # unscale_ (unless done), then step unless inf/NaN
        scaler.update()            # back off or grow the scale

    Args: device ("cpu"; "cuda" warns and disables without CUDA), init_scale (2**16),
    growth_factor (> 1), backoff_factor (< 1), growth_interval (clean steps before
    growing), enabled (False: every method is a pass-through)."""

    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled and not tessera.cuda.is_available():
            warnings.warn("tessera.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.")
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None  # made on the first scale(), on the loss's device
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = collections.defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        self._scale = tessera.full((), self._init_scale, dtype=tessera.float32, device=dev)
        self._growth_tracker = tessera.full((), self._init_growth_tracker, dtype=tessera.int32, device=dev)

    def scale(self, outputs):
        """outputs (a tensor, or an iterable of them, returned in kind) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, tessera.Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)
        stash = []

        def apply_scale(val):
            if isinstance(val, tessera.Tensor):
                if not stash:
                    if self._scale is None:
                        self._lazy_init_scale_growth_tracker(val.device)
                    stash.append(_MultiDeviceReplicator(self._scale))
                return val * stash[0].get(val.device)
            if isinstance(val, collections.abc.Iterable):
                iterable = map(apply_scale, val)
                return type(val)(iterable) if isinstance(val, (list, tuple)) else iterable
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        per_device_inv_scale = _MultiDeviceReplicator(inv_scale)
        per_device_found_inf = _MultiDeviceReplicator(found_inf)
        per_device_and_dtype_grads = collections.defaultdict(lambda: collections.defaultdict(list))
        with tessera.no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    if (not allow_fp16) and param.grad.dtype == tessera.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    per_device_and_dtype_grads[param.grad.device][param.grad.dtype].append(param.grad)
            for device, per_dtype_grads in per_device_and_dtype_grads.items():
                for grads in per_dtype_grads.values():
                    tessera._amp_foreach_non_finite_check_and_unscale_(grads, per_device_found_inf.get(device),
                                                                        per_device_inv_scale.get(device))
        return per_device_found_inf._per_device_tensors

    def unscale_(self, optimizer):
        """Divides optimizer's gradients by the scale in place (once per step), noting any
        inf/NaN; for clipping or inspecting gradients between backward and step."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # The reciprocal in float64, as torch (1/65536 and friends are exact either way).
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = tessera.full((), 0.0, dtype=tessera.float32, device=self._scale.device)
        optimizer_state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        optimizer_state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(*args, **kwargs) on the unscaled gradients, unless any was inf/NaN
        (then the step is skipped and None returned)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(optimizer_state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Ends the iteration: backs the scale off if any optimizer's step saw inf/NaN,
        else counts toward growth; or sets it to new_scale (a float or 1-element tensor)."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                reason = (f"new_scale should be a float or a 1-element tessera.{self._device}.FloatTensor or "
                          f"tessera.FloatTensor with requires_grad=False.")
                if not (isinstance(new_scale, tessera.Tensor) and new_scale.device.type == self._device
                        and new_scale.numel() == 1 and not new_scale.requires_grad):
                    raise AssertionError(reason)
                self._scale.copy_(new_scale)
        else:
            found_infs = [found_inf.to(device=_scale.device, non_blocking=True)
                          for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf_combined = found_infs[0]
            for found_inf in found_infs[1:]:
                found_inf_combined += found_inf
            tessera._amp_update_scale_(_scale, _growth_tracker, found_inf_combined, self._growth_factor,
                                       self._backoff_factor, self._growth_interval)
        self._per_optimizer_states = collections.defaultdict(_refresh_per_optimizer_state)

    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker.item()

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """scale, growth_factor, backoff_factor, growth_interval and _growth_tracker ({} when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning of an iteration, "
                                     "or at the end after scaler.update().")
            # The scale and tracker travel as Python numbers; tensors are remade on first use.
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer):
        _scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        dummy_inv_scale = tessera.full((), 1.0, dtype=tessera.float32, device=_scale.device)
        found_inf = tessera.full((), 0.0, dtype=tessera.float32, device=_scale.device)
        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = self._unscale_grads_(
            optimizer, dummy_inv_scale, found_inf, True)
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]
