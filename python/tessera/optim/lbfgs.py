"""optim.LBFGS: limited-memory BFGS over all parameters taken as one flat vector, with an
optional line search meeting the strong Wolfe conditions. step(closure) calls the closure
as many times as its inner iterations need.

Scalar types follow torch 1.13, because its users (and state_dicts) see them: the loss is
kept as a Python float, while slopes and curvature terms stay 0-dim tensors in the
parameters' dtype, so both round as torch's do."""
from .. import _C
from ..autograd.grad_mode import enable_grad, no_grad
from .optimizer import Optimizer

__all__ = ["LBFGS"]


def _own_copy(vec):
    return vec.clone(memory_format=_C.contiguous_format)


# ---------------------------------------------------------------- interpolation

def _cubic_step(a, fa, ga, b, fb, gb, lo=None, hi=None):
    """Where the cubic Hermite interpolant of (a, fa, slope ga) and (b, fb, slope gb) has
    its minimum (Nocedal & Wright, eq. 3.59), kept within [lo, hi] (by default the
    interval the two points span). Without a real minimiser, the middle of [lo, hi]."""
    if lo is None:
        lo, hi = (a, b) if a <= b else (b, a)
    d1 = ga + gb - 3 * (fa - fb) / (a - b)
    radicand = d1 ** 2 - ga * gb
    if not radicand >= 0:
        return (lo + hi) / 2.
    d2 = radicand.sqrt()
    # The formula is written from the right-hand end of the pair.
    if a <= b:
        near, far, g_near, g_far = a, b, ga, gb
    else:
        near, far, g_near, g_far = b, a, gb, ga
    x = far - (far - near) * ((g_far + d2 - d1) / (g_far - g_near + 2 * d2))
    if lo > x:
        x = lo
    if hi < x:
        x = hi
    return x


# ---------------------------------------------------------------- line search

class _Trial:
    """A step length tried along the search direction: t, loss f, flat gradient g, slope."""
    __slots__ = ("t", "f", "g", "slope")

    def __init__(self, t, f, g, slope):
        self.t, self.f, self.g, self.slope = t, f, g, slope

    def detached(self):
        """The same trial holding a gradient of its own (kept in the bracket)."""
        return _Trial(self.t, self.f, _own_copy(self.g), self.slope)


class _WolfeSearch:
    """Nocedal & Wright's line search (algorithms 3.5 and 3.6): grow the step until an
    interval is known to hold acceptable points, then narrow it by safeguarded cubic
    interpolation until a point satisfies
        sufficient decrease  f(t) <= f(0) + c1 t f'(0)   and
        strong curvature     |f'(t)| <= c2 |f'(0)|.
    `evaluate(x, t, d)` returns (loss, flat gradient) at x + t d."""

    def __init__(self, evaluate, x, d, f0, g0, slope0, c1, c2, tolerance_change, max_ls):
        self.evaluate, self.x, self.d = evaluate, x, d
        self.f0, self.slope0 = f0, slope0
        self.c1, self.c2 = c1, c2
        self.tolerance_change, self.max_ls = tolerance_change, max_ls
        self.origin = _Trial(0, f0, _own_copy(g0), slope0)
        self.calls = 0

    @property
    def retries(self):
        """Evaluations after the first; max_ls caps them."""
        return self.calls - 1

    def probe(self, t):
        f, g = self.evaluate(self.x, t, self.d)
        self.calls += 1
        return _Trial(t, f, g, g.dot(self.d))

    def too_high(self, p):
        return p.f > (self.f0 + self.c1 * p.t * self.slope0)

    def flat_enough(self, p):
        return abs(p.slope) <= -self.c2 * self.slope0

    def expand(self, t):
        """Phase one. Returns (ends, accepted): ends is a single acceptable trial (accepted)
        or the two ends of an interval to zoom into."""
        last, here = self.origin, self.probe(t)
        while self.retries < self.max_ls:
            climbing = self.retries > 1 and here.f >= last.f
            if self.too_high(here) or climbing:
                return [last, here.detached()], False
            if self.flat_enough(here):
                return [here], True
            if here.slope >= 0:
                return [last, here.detached()], False
            # Still going down: extrapolate by at least 1% of the last move, at most to 10 t.
            nxt = _cubic_step(last.t, last.f, last.slope, here.t, here.f, here.slope,
                              lo=here.t + 0.01 * (here.t - last.t), hi=here.t * 10)
            last = here.detached()
            here = self.probe(nxt)
        # Out of evaluations: fall back on the start and the last trial.
        return [self.origin, here], False

    def narrow(self, ends, accepted):
        """Phase two: returns the best trial found."""
        best = 0 if ends[0].f <= ends[-1].f else 1
        hugging = False  # the previous trial was already close to an end
        while not accepted and self.retries < self.max_ls:
            a, b = ends
            if abs(b.t - a.t) * self.d_norm < self.tolerance_change:
                break
            t = _cubic_step(a.t, a.f, a.slope, b.t, b.f, b.slope)
            right, left = max(a.t, b.t), min(a.t, b.t)
            margin = 0.1 * (right - left)
            if min(right - t, t - left) < margin:
                # Pulled a tenth of the interval inwards when this happens twice running,
                # or when the interpolant put t on or beyond an end.
                if hugging or t >= right or t <= left:
                    t = right - margin if abs(t - right) < abs(t - left) else left + margin
                    hugging = False
                else:
                    hugging = True
            else:
                hugging = False
            p = self.probe(t)
            worst = 1 - best
            if self.too_high(p) or p.f >= ends[best].f:
                ends[worst] = p.detached()
                best = 0 if ends[0].f <= ends[1].f else 1
                continue
            if self.flat_enough(p):
                accepted = True
            elif p.slope * (ends[worst].t - ends[best].t) >= 0:
                ends[worst] = ends[best]
            ends[best] = p.detached()
        return ends[best]

    def run(self, t):
        self.d_norm = self.d.abs().max()
        chosen = self.narrow(*self.expand(t))
        return chosen.f, chosen.g, chosen.t, self.calls


def _line_search(evaluate, x, t, d, f, g, slope, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """(loss, flat gradient, step length, evaluations) of a strong-Wolfe search along d."""
    return _WolfeSearch(evaluate, x, d, f, g, slope, c1, c2, tolerance_change, max_ls).run(t)


# ---------------------------------------------------------------- the optimizer

# What step() leaves in the first parameter's state after the two counters, in torch's order.
def _real(t):
    return _C.view_as_real(t) if t.is_complex() else t


_CARRIED = ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "prev_loss")


class LBFGS(Optimizer):
    """L-BFGS over a single parameter group. As in torch, everything the iteration carries
    from one step() to the next (counters, last direction and step length, the curvature
    pairs) is the state of the first parameter, so state_dict and load_state_dict keep it."""

    _complex_as_real = False

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        options = {"lr": lr, "max_iter": max_iter,
                   "max_eval": max_iter * 5 // 4 if max_eval is None else max_eval,
                   "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                   "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, options)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # ------------------------------------------------------------ parameters as one vector

    # A complex parameter is two real ones (its view_as_real), as in current torch. A grad
    # may be a conj() view, which view_as_real refuses: resolve it first.
    def _flat_grad(self):
        return _C.cat([_real(p).new_zeros(_real(p).numel()) if p.grad is None
                       else _real(p.grad.resolve_conj()).reshape(-1) for p in self._params], 0)

    def _shift(self, scale, vec):
        """Every parameter += scale * its slice of the flat vector vec."""
        start = 0
        for p in self._params:
            r = _real(p)
            stop = start + r.numel()
            r.add_(vec[start:stop].view_as(r), alpha=scale)
            start = stop

    def _loss_and_grad_at(self, closure, origin, scale, vec):
        """(loss, flat gradient) at origin + scale * vec; the parameters end at origin."""
        self._shift(scale, vec)
        value = float(self._call(closure))
        grad = self._flat_grad()
        for p, saved in zip(self._params, origin):
            p.copy_(saved)
        return value, grad

    @staticmethod
    def _call(closure):
        with enable_grad():
            return closure()

    # ------------------------------------------------------------ the step

    def step(self, closure):
        """Runs up to max_iter iterations. closure() must zero the gradients, compute the
        loss, call backward() and return the loss; step returns its first value."""
        for hook in list(self._optimizer_step_pre_hooks.values()):
            hook(self, (), {})
        with no_grad():
            first = self._minimize(closure)
        for hook in list(self._optimizer_step_post_hooks.values()):
            hook(self, (), {})
        return first

    def _minimize(self, closure):
        opts = self.param_groups[0]
        max_iter, max_eval = opts["max_iter"], opts["max_eval"]
        tol_grad, tol_change = opts["tolerance_grad"], opts["tolerance_change"]
        search = opts["line_search_fn"]

        memory = self.state[self._params[0]]
        memory.setdefault("func_evals", 0)
        memory.setdefault("n_iter", 0)

        first = self._call(closure)
        loss = float(first)
        memory["func_evals"] += 1
        spent = 1
        grad = self._flat_grad()
        if grad.abs().max() <= tol_grad:
            return first  # nothing to do at a stationary point

        direction, step_len, dirs, steps, rhos, h0, last_grad, last_loss = (memory.get(k) for k in _CARRIED)

        for inner in range(1, max_iter + 1):
            memory["n_iter"] += 1
            very_first = memory["n_iter"] == 1

            if very_first:
                direction = grad.neg()
                dirs, steps, rhos = [], [], []
                h0 = 1
            else:
                h0 = _record_pair(grad.sub(last_grad), direction.mul(step_len), dirs, steps, rhos, h0,
                                  opts["history_size"])
                direction = self._descent_direction(memory, grad, dirs, steps, rhos, h0, opts["history_size"])

            if last_grad is None:
                last_grad = _own_copy(grad)
            else:
                last_grad.copy_(grad)
            last_loss = loss

            step_len = _first_step_length(grad, opts["lr"]) if very_first else opts["lr"]
            slope = grad.dot(direction)
            if slope > -tol_change:
                break  # d no longer points downhill

            if search is None:
                self._shift(step_len, direction)
                converged, used = False, 0
                if inner != max_iter:
                    # After the last iteration the loss is not re-evaluated: a stochastic
                    # caller gets a fresh one from the next step() anyway.
                    loss = float(self._call(closure))
                    grad = self._flat_grad()
                    converged, used = grad.abs().max() <= tol_grad, 1
            else:
                if search != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                origin = [_own_copy(p) for p in self._params]

                def evaluate(x, t, vec):
                    return self._loss_and_grad_at(closure, x, t, vec)

                loss, grad, step_len, used = _line_search(evaluate, origin, step_len, direction, loss, grad, slope)
                self._shift(step_len, direction)
                converged = grad.abs().max() <= tol_grad
            spent += used
            memory["func_evals"] += used

            if inner == max_iter or spent >= max_eval or converged:
                break
            if direction.mul(step_len).abs().max() <= tol_change:
                break  # the parameters have stopped moving
            if abs(loss - last_loss) < tol_change:
                break  # so has the loss

        memory.update(zip(_CARRIED, (direction, step_len, dirs, steps, rhos, h0, last_grad, last_loss)))
        return first

    @staticmethod
    def _descent_direction(memory, grad, dirs, steps, rhos, h0, history_size):
        """-H grad, H the inverse-Hessian estimate built from the stored pairs over the
        initial scaling h0 (the two-loop recursion, Nocedal & Wright algorithm 7.4). The
        first loop's coefficients stay in memory['al'] between steps, as torch keeps them."""
        coeffs = memory.setdefault("al", [None] * history_size)
        pairs = list(zip(dirs, steps, rhos))
        q = grad.neg()
        for i in reversed(range(len(pairs))):
            y, s, rho = pairs[i]
            coeffs[i] = s.dot(q) * rho
            q.add_(y, alpha=-coeffs[i])
        r = q.mul(h0)
        for (y, s, rho), a in zip(pairs, coeffs):
            r.add_(s, alpha=a - y.dot(r) * rho)
        return r


def _record_pair(y, s, dirs, steps, rhos, h0, history_size):
    """Adds the curvature pair (y, s) when y.s is safely positive, dropping the oldest pair
    at capacity; returns the initial Hessian scaling, y.s / y.y for a new pair."""
    ys = y.dot(s)
    if not ys > 1e-10:
        return h0
    if len(dirs) == history_size:
        for history in (dirs, steps, rhos):
            history.pop(0)
    dirs.append(y)
    steps.append(s)
    rhos.append(1. / ys)
    return ys / y.dot(y)


def _first_step_length(grad, lr):
    """The very first iteration scales its step by the gradient's size (capped at lr)."""
    shrink = 1. / grad.abs().sum()
    return (shrink if shrink < 1. else 1.) * lr
