"""The kernel attention family (core/attention/kernel_family/, seed 002): pseudo, semi-fusion, gaussian
and linear-sim.

Every member maps x [B, L, D] -> [B, L, D] with n = heads, Dh = D / n:
  X~ = X U (+ b1), split into heads X~_i [B, n, L, Dh]           (parameter input_proj)
  AttnMap_i = softmax(M_i / Dh)            (1/Dh, not 1/sqrt(Dh); masked when causal)
  Output = concat_i(AttnMap_i V_i) P + b2                         (parameter out)
and they differ in the raw map M_i and the values V_i:
  pseudo       M = X~ A X~^T, V = X~.        head_kernel A [n, Dh, Dh]
  semi-fusion  as pseudo, no b1, V = X~ Wv.  head_kernel A, head_value Wv [n, Dh, Dh]
  gaussian     M[s, r] = sum_{d1, d2} exp(-(x~_{s,d1} - x~_{r,d2})^2 / (2 sigma^2)), V = X~.
  linear-sim   M[s, o] = x~_s^T W_o pool_s, pool_s = sum_{r in R_s} x~_r / sqrt(|R_s|)
               (R_s: the prefix r <= s when causal, else every token), V = X~.
               slot_kernel W [max_len, n, Dh, Dh]; a sequence uses the first L slots.
model.position "alibi" adds -m_h (i - j) to M / Dh; "rope" does not apply (attnlab refuses it).
Hooks: q and k both see X~ (the query and key sides of the map: replacing one leaves the
other), v sees the values.
"""
import math

import torch
import torch.nn as nn

from ..mechanisms import option_defaults
from .base import AttentionBase, fan_in_uniform_


class KernelAttention(AttentionBase):
    """The family's shared steps (KernelAttentionBase). Subclasses set `values` and `raw_map`."""

    input_bias = True

    def __init__(self, spec):
        super().__init__(spec)
        self.init = spec.options.get("init", "default")
        self.input_proj = nn.Linear(spec.d_model, spec.d_model, bias=self.input_bias)

    def per_head(self, *shape):
        return nn.Parameter(torch.empty(*shape, self.heads, self.head_dim, self.head_dim))

    def own_tensors(self):  # the per-head tensors reset_own_parameters initialises
        return []

    def reset_own_parameters(self):
        """default: U(+-1/sqrt(Dh)) for the per-head tensors (U and P keep the GPT-2 init);
        xavier: Glorot-uniform (Dh -> Dh) for them, and for U and P, with zero biases."""
        if self.init != "xavier":
            for t in self.own_tensors():
                fan_in_uniform_(t, self.head_dim)
            return
        with torch.no_grad():
            bound = math.sqrt(6.0 / (2.0 * self.head_dim))
            for t in self.own_tensors():
                t.uniform_(-bound, bound)
            for layer in (self.input_proj, self.out):
                nn.init.xavier_uniform_(layer.weight)
                if layer.bias is not None:
                    layer.bias.zero_()

    def forward(self, x, return_pattern=False):
        B, L, D = x.shape
        xt = self.input_proj(x).view(B, L, self.heads, self.head_dim).transpose(1, 2)
        q, k = self.hook_q(xt), self.hook_k(xt)
        values = self.hook_v(self.values(xt))
        scores = self.masked(self.raw_map(q, k) / float(self.head_dim))
        z, pattern = self.attend(scores, values)
        y = self.out(self.merge(z))
        return (y, pattern) if return_pattern else y

    def values(self, xt):
        return xt


def quadratic_map(q, kernel, k):
    """M_i = X~_i A_i X~_i^T (pseudo and semi-fusion)."""
    return (q @ kernel) @ k.transpose(-2, -1)


class PseudoAttention(KernelAttention):
    def __init__(self, spec):
        super().__init__(spec)
        self.head_kernel = self.per_head()
        self.out = nn.Linear(spec.d_model, spec.d_model)
        self.reset_own_parameters()

    def own_tensors(self):
        return [self.head_kernel]

    def raw_map(self, q, k):
        return quadratic_map(q, self.head_kernel, k)


class SemiFusionAttention(KernelAttention):
    input_bias = False

    def __init__(self, spec):
        super().__init__(spec)
        self.head_kernel, self.head_value = self.per_head(), self.per_head()
        self.out = nn.Linear(spec.d_model, spec.d_model)
        self.reset_own_parameters()

    def own_tensors(self):
        return [self.head_kernel, self.head_value]

    def raw_map(self, q, k):
        return quadratic_map(q, self.head_kernel, k)

    def values(self, xt):  # AttnMap_i (X~_i Wv_i)
        return xt @ self.head_value


class GaussianAttention(KernelAttention):
    # Query rows per step of the map: the [B, n, rows, L, Dh, Dh] differences stay near this
    # many elements (attnlab's reference chunks the same way; its CPU kernel never builds them).
    chunk_elements = 1 << 24

    def __init__(self, spec):
        super().__init__(spec)
        self.sigma = float(spec.options.get("sigma", 1.0))
        self.out = nn.Linear(spec.d_model, spec.d_model)

    def raw_map(self, q, k):
        B, n, L, Dh = q.shape
        c = 1.0 / (2.0 * self.sigma * self.sigma)
        rows = max(1, self.chunk_elements // max(1, B * n * L * Dh * Dh))
        keys = k.view(B, n, 1, L, 1, Dh)
        parts = []
        for s0 in range(0, L, rows):
            queries = q[:, :, s0:s0 + rows].unsqueeze(3).unsqueeze(-1)  # [B, n, r, 1, Dh, 1]
            parts.append(torch.exp((queries - keys).pow(2) * -c).sum((-2, -1)))
        return torch.cat(parts, 2)


class LinearSimAttention(KernelAttention):
    def __init__(self, spec):
        super().__init__(spec)
        self.max_len = int(spec.options.get(
            "max_len", option_defaults("linear-sim")["max_len"]))
        self.slot_kernel = self.per_head(self.max_len)
        self.out = nn.Linear(spec.d_model, spec.d_model)
        self.reset_own_parameters()

    def own_tensors(self):
        return [self.slot_kernel]

    def raw_map(self, q, k):
        B, n, L, Dh = q.shape
        if L > self.max_len:
            raise ValueError(f"linear-sim: a sequence of {L} tokens is longer than max_len "
                             f"{self.max_len}")
        if self.causal:  # the prefix r <= s, so no future token reaches s through the pool
            count = torch.arange(1, L + 1, dtype=k.dtype, device=k.device).sqrt().view(1, 1, L, 1)
            pool = k.cumsum(2) / count
        else:
            pool = (k.sum(2, keepdim=True) / math.sqrt(L)).expand_as(k)
        outer = (q.unsqueeze(-1) * pool.unsqueeze(-2)).reshape(B, n, L, Dh * Dh)
        slots = self.slot_kernel[:L].permute(1, 2, 3, 0).reshape(n, Dh * Dh, L)
        return outer @ slots
