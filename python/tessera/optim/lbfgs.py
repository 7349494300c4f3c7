"""optim.LBFGS: limited-memory BFGS (after minFunc) over all parameters as one flat vector,
with an optional strong-Wolfe line search. step(closure) re-evaluates the loss as often as
the iteration needs. The scalars follow torch 1.13's types: curvature terms stay 0-dim
tensors of the parameters' dtype and the loss a Python float, so both dtypes round as
torch's do."""
from .. import _C
from ..autograd.grad_mode import enable_grad, no_grad
from .optimizer import Optimizer

__all__ = ["LBFGS"]


def _cubic_min(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2,
    clamped to bounds (default: the interval between x1 and x2); the interval's middle
    when the cubic has no real minimiser."""
    if bounds is None:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    else:
        lo, hi = bounds
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 ** 2 - g1 * g2
    if not disc >= 0:
        return (lo + hi) / 2.
    d2 = disc.sqrt()
    # Measured from the point further along, so the formula divides by the larger slope gap.
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


class _Point:
    """One trial of the line search: step length t, loss f, flat gradient g, slope gtd."""
    __slots__ = ("t", "f", "g", "gtd")

    def __init__(self, t, f, g, gtd):
        self.t, self.f, self.g, self.gtd = t, f, g, gtd


def _strong_wolfe(evaluate, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step length along d satisfying the strong Wolfe conditions (Nocedal & Wright,
    algorithms 3.5 and 3.6): a bracketing phase that grows t, then a zoom that shrinks the
    bracket by safeguarded cubic interpolation. evaluate(x, t, d) gives (loss, flat grad)
    at x + t d. Returns (loss, grad, t, evaluations)."""
    d_norm = d.abs().max()
    start = _Point(0, f, g.clone(memory_format=_C.contiguous_format), gtd)

    def probe(step):
        f_new, g_new = evaluate(x, step, d)
        return _Point(step, f_new, g_new, g_new.dot(d))

    def armijo_fails(p):
        return p.f > (f + c1 * p.t * gtd)

    def curvature_holds(p):
        return abs(p.gtd) <= -c2 * gtd

    def kept(p):
        # Points stored in the bracket keep a gradient of their own.
        return _Point(p.t, p.f, p.g.clone(memory_format=_C.contiguous_format), p.gtd)

    cur = probe(t)
    evals, tries = 1, 0
    prev = start
    bracket = None
    done = False
    while tries < max_ls:
        if armijo_fails(cur) or (tries > 1 and cur.f >= prev.f):
            bracket = [prev, kept(cur)]
            break
        if curvature_holds(cur):
            bracket, done = [cur], True
            break
        if cur.gtd >= 0:
            bracket = [prev, kept(cur)]
            break
        # Still descending: extrapolate, at least 1% further, at most ten times as far.
        lo_bound = cur.t + 0.01 * (cur.t - prev.t)
        hi_bound = cur.t * 10
        step = _cubic_min(prev.t, prev.f, prev.gtd, cur.t, cur.f, cur.gtd, bounds=(lo_bound, hi_bound))
        prev = kept(cur)
        cur = probe(step)
        evals += 1
        tries += 1
    if tries == max_ls:
        # No bracket found: the start and the last point (only its step, loss and gradient).
        bracket = [start, _Point(cur.t, cur.f, cur.g, None)]

    # Zoom: shrink the bracket until a point meets both conditions.
    low, high = (0, 1) if bracket[0].f <= bracket[-1].f else (1, 0)
    stalled = False
    while not done and tries < max_ls:
        a, b = bracket[0].t, bracket[1].t
        if abs(b - a) * d_norm < tolerance_change:
            break
        step = _cubic_min(a, bracket[0].f, bracket[0].gtd, b, bracket[1].f, bracket[1].gtd)
        top, bottom = max(a, b), min(a, b)
        margin = 0.1 * (top - bottom)
        if min(top - step, step - bottom) < margin:
            # Too close to an end: move a tenth of the bracket inside it when that happened
            # twice in a row or the trial fell on (or past) an end.
            if stalled or step >= top or step <= bottom:
                step = top - margin if abs(step - top) < abs(step - bottom) else bottom + margin
                stalled = False
            else:
                stalled = True
        else:
            stalled = False
        cur = probe(step)
        evals += 1
        tries += 1
        if armijo_fails(cur) or cur.f >= bracket[low].f:
            bracket[high] = kept(cur)
            low, high = (0, 1) if bracket[0].f <= bracket[1].f else (1, 0)
        else:
            if curvature_holds(cur):
                done = True
            elif cur.gtd * (bracket[high].t - bracket[low].t) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = kept(cur)
    best = bracket[low]
    return best.f, best.g, best.t, evals


class LBFGS(Optimizer):
    """L-BFGS over one parameter group. Its state (iteration counts, the last direction and
    step, the curvature history) is kept as the state of the first parameter, as in torch,
    so that state_dict and load_state_dict carry it."""

    _checks_complex = False

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size,
                        line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    # ------------------------------------------------------------ the flat vector

    def _numel(self):
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self):
        pieces = []
        for p in self._params:
            g = p.grad
            pieces.append(p.new_zeros(p.numel()) if g is None else g.reshape(-1))
        return _C.cat(pieces, 0)

    def _add_grad(self, step_size, update):
        """params += step_size * update, update being a flat vector over all parameters."""
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(update[offset:offset + n].view_as(p), alpha=step_size)
            offset += n
        assert offset == self._numel()

    def _clone_param(self):
        return [p.clone(memory_format=_C.contiguous_format) for p in self._params]

    def _set_param(self, values):
        for p, v in zip(self._params, values):
            p.copy_(v)

    def _directional_evaluate(self, closure, x, t, d):
        """Loss and flat gradient at x + t d; the parameters are put back to x after."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    # ------------------------------------------------------------ the step

    def step(self, closure):
        """Up to max_iter L-BFGS iterations; closure() must clear the gradients, recompute
        the loss, call backward() and return the loss. Returns the loss of the first call."""
        for hook in list(self._optimizer_step_pre_hooks.values()):
            hook(self, (), {})
        with no_grad():
            loss = self._iterate(closure)
        for hook in list(self._optimizer_step_post_hooks.values()):
            hook(self, (), {})
        return loss

    def _evaluate(self, closure):
        with enable_grad():
            return closure()

    def _iterate(self, closure):
        assert len(self.param_groups) == 1
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = self._evaluate(closure)
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss  # already optimal

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # The search direction.
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:
                    # Keep the pair only where the curvature is positive, dropping the oldest
                    # once history_size pairs are held.
                    if len(old_dirs) == history_size:
                        del old_dirs[0], old_stps[0], ro[0]
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1. / ys)
                    H_diag = ys / y.dot(y)
                d = self._two_loop(state, flat_grad, old_dirs, old_stps, ro, H_diag, history_size)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone(memory_format=_C.contiguous_format)
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # The step length: the first iteration scales by the gradient's size.
            if state["n_iter"] == 1:
                t = min(1., 1. / flat_grad.abs().sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break  # not a descent direction any more

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def evaluate(x, step, direction):
                    return self._directional_evaluate(lambda: self._evaluate(closure), x, step, direction)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(evaluate, x_init, t, d, loss, flat_grad, gtd)
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    # The last iteration's loss is not re-evaluated (of no use to a stochastic
                    # caller, who evaluates again next step).
                    loss = float(self._evaluate(closure))
                    flat_grad = self._gather_flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change:
                break  # the parameters barely move
            if abs(loss - prev_loss) < tolerance_change:
                break  # the loss barely moves

        state["d"] = d
        state["t"] = t
        state["old_dirs"] = old_dirs
        state["old_stps"] = old_stps
        state["ro"] = ro
        state["H_diag"] = H_diag
        state["prev_flat_grad"] = prev_flat_grad
        state["prev_loss"] = prev_loss
        return orig_loss

    @staticmethod
    def _two_loop(state, flat_grad, old_dirs, old_stps, ro, H_diag, history_size):
        """-H grad for the inverse-Hessian estimate H of the stored pairs (the two-loop
        recursion, in one buffer). The first loop's coefficients are kept in state['al']."""
        if "al" not in state:
            state["al"] = [None] * history_size
        al = state["al"]
        count = len(old_dirs)
        q = flat_grad.neg()
        for i in reversed(range(count)):
            al[i] = old_stps[i].dot(q) * ro[i]
            q.add_(old_dirs[i], alpha=-al[i])
        r = _C.mul(q, H_diag)
        for i in range(count):
            be_i = old_dirs[i].dot(r) * ro[i]
            r.add_(old_stps[i], alpha=al[i] - be_i)
        return r
