"""ExponentialFamily: distributions whose density is h(x) exp(<t(x), theta> - F(theta)).
Knowing the natural parameters theta and the log normalizer F gives the entropy (and,
in kl.py, the KL divergence between two members) by differentiating F."""
import tessera

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class of exponential-family distributions. Subclasses give _natural_params,
    _log_normalizer(*natural_params) and _mean_carrier_measure (E[log h(x)])."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def _log_normalizer_and_grads(self):
        """(theta, F(theta), grad F(theta)) at the natural parameters theta, taken as fresh
        leaves (detached) so that autograd differentiates F alone; grad F keeps its graph.
        The entropy below and the Bregman KL in kl.py are both built from these."""
        thetas = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*thetas)
        return thetas, log_norm, tessera.autograd.grad(log_norm.sum(), thetas, create_graph=True)

    def entropy(self):
        """H = F(theta) - <theta, grad F(theta)> - E[log h(x)], with grad F from autograd."""
        thetas, log_norm, grads = self._log_normalizer_and_grads()
        result = log_norm - self._mean_carrier_measure
        for theta, grad in zip(thetas, grads):
            result = result - (theta * grad).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
