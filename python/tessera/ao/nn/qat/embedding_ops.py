"""The quantization-aware-training embeddings (torch.ao.nn.qat.Embedding, EmbeddingBag):
float lookup tables whose weight passes through a per-row fake quantizer with float qparams
(per_channel_affine_float_qparams, the only scheme the quantized embeddings take)."""
from .... import _C
from ....nn import functional as F
from ....nn.modules import sparse as float_sparse
from ....nn.parameter import Parameter

__all__ = ["Embedding", "EmbeddingBag"]


def _check_float_qparams(qscheme, what):
    assert qscheme == _C.per_channel_affine_float_qparams, \
        f"{what} weights requires a qscheme of torch.per_channel_affine_float_qparams Got {qscheme}"


def _check_float_module(cls, mod, what):
    assert type(mod) == cls._FLOAT_MODULE, \
        " qat." + cls.__name__ + ".from_float only works for " + cls._FLOAT_MODULE.__name__
    assert hasattr(mod, "qconfig"), "Input float module must have qconfig defined"
    assert mod.qconfig, "Input float module must have a valid qconfig"
    _check_float_qparams(mod.qconfig.weight().qscheme, what)


class Embedding(float_sparse.Embedding):
    """F.embedding over fq(weight), fq being weight_fake_quant."""

    _FLOAT_MODULE = float_sparse.Embedding

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, device=None, dtype=None, qconfig=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__(num_embeddings, embedding_dim, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                         _weight=_weight, **factory_kwargs)
        assert qconfig, "qconfig must be provided for QAT module"
        _check_float_qparams(qconfig.weight().qscheme, "Embedding")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight(factory_kwargs=factory_kwargs)

    def forward(self, input):
        return F.embedding(input, self.weight_fake_quant(self.weight), self.padding_idx, self.max_norm,
                           self.norm_type, self.scale_grad_by_freq, self.sparse)

    @classmethod
    def from_float(cls, mod):
        """The QAT twin of a float Embedding that carries a qconfig, sharing its weight."""
        _check_float_module(cls, mod, "Embedding")
        return cls(mod.num_embeddings, mod.embedding_dim, mod.padding_idx, mod.max_norm, mod.norm_type,
                   mod.scale_grad_by_freq, mod.sparse, mod.weight, qconfig=mod.qconfig)

    def to_float(self):
        embedding = float_sparse.Embedding(self.num_embeddings, self.embedding_dim, self.padding_idx, self.max_norm,
                                           self.norm_type, self.scale_grad_by_freq, self.sparse, None)
        embedding.weight = Parameter(self.weight.detach())
        embedding.train(self.training)
        return embedding


class EmbeddingBag(float_sparse.EmbeddingBag):
    """F.embedding_bag over fq(weight), fq being weight_fake_quant."""

    _FLOAT_MODULE = float_sparse.EmbeddingBag

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, qconfig=None,
                 device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__(num_embeddings, embedding_dim, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                         _weight, include_last_offset, padding_idx, **factory_kwargs)
        assert qconfig, "qconfig must be provided for QAT module"
        _check_float_qparams(qconfig.weight().qscheme, "Embedding Bag")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight(factory_kwargs=factory_kwargs)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight_fake_quant(self.weight), offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse, per_sample_weights,
                               self.include_last_offset, self.padding_idx)

    @classmethod
    def from_float(cls, mod):
        """The QAT twin of a float EmbeddingBag that carries a qconfig, sharing its weight."""
        _check_float_module(cls, mod, "Embedding Bag")
        return cls(mod.num_embeddings, mod.embedding_dim, mod.max_norm, mod.norm_type, mod.scale_grad_by_freq,
                   mod.mode, mod.sparse, mod.weight, mod.include_last_offset, mod.padding_idx, qconfig=mod.qconfig)

    def to_float(self):
        bag = float_sparse.EmbeddingBag(self.num_embeddings, self.embedding_dim, self.max_norm, self.norm_type,
                                        self.scale_grad_by_freq, self.mode, self.sparse, None,
                                        self.include_last_offset, self.padding_idx)
        bag.weight = Parameter(self.weight.detach())
        bag.train(self.training)
        return bag
