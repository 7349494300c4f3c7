"""The batch-norm bookkeeping the QAT modules with a folded batch norm (ConvBn*d, LinearBn1d)
share: whether the batch norm's running statistics update (update_bn_stats / freeze_bn_stats,
as torch's names), and a train() that leaves a frozen batch norm in eval mode."""

from ..... import _C
from .....nn.parameter import Parameter

__all__ = []


class _BatchNormStatsMixin:
    def _set_up_batch_norm(self, bn, bias, freeze_bn):
        """The parts the float layer's __init__ does not make: the batch norm, the weight's
        fake quantizer, the bias (a separate parameter, reset with the batch norm) and the
        frozen-or-not state."""
        self.freeze_bn = freeze_bn if self.training else True
        self.bn = bn
        self.weight_fake_quant = self.qconfig.weight()
        if bias:
            self.bias = Parameter(_C.empty(bn.num_features))
        else:
            self.register_parameter("bias", None)
        self.reset_bn_parameters()
        # after reset_bn_parameters, which leaves the batch norm in training mode
        if self.training and not freeze_bn:
            self.update_bn_stats()
        else:
            self.freeze_bn_stats()

    def _share_float_modules(self, layer, bn):
        """Takes the float layer's weight and bias and the batch norm's parameters and running
        statistics (shared, as torch's from_float shares them)."""
        self.weight = layer.weight
        self.bias = layer.bias
        for name in ("weight", "bias", "running_mean", "running_var", "num_batches_tracked"):
            setattr(self.bn, name, getattr(bn, name))
        return self

    def reset_running_stats(self):
        self.bn.reset_running_stats()

    def update_bn_stats(self):
        self.freeze_bn = False
        self.bn.training = True
        return self

    def freeze_bn_stats(self):
        self.freeze_bn = True
        self.bn.training = False
        return self

    def train(self, mode=True):
        """A frozen batch norm stays in eval mode whatever model.train() says."""
        self.training = mode
        if not self.freeze_bn:
            for module in self.children():
                module.train(mode)
        return self
