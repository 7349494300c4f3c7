"""The batch-norm bookkeeping the QAT modules with a folded batch norm (ConvBn*d, LinearBn1d)
share: whether the batch norm's running statistics update (update_bn_stats / freeze_bn_stats,
as torch's names), and a train() that leaves a frozen batch norm in eval mode."""

__all__ = []


class _BatchNormStatsMixin:
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
