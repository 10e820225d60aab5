"""The Connection Transformer (core/models/conn/conn_model.cpp, seed 001): model.architecture "conn".

  X = token embedding + position table                                      [B, L, D]
  compression:  A = softmax over slots of (X Wq)(H Wk)^T / sqrt(D)          [B, L, N]
                H_0 of prefix t = H + sum_{s <= t} A_s^T (X Wv)_s            [B, L, N, D]
  K steps:      H_k = LayerNorm_k(H_{k-1} + Infl), Infl = C^T H ("slots" mixing) or H C
                ("literal"), GELU(Infl) for the "nonlinear" variant; C = mean of the heads
  expansion:    Y = softmax((X Wq')(H_K Wk')^T / sqrt(D)) (H_K Wv')          [B, L, D]
  logits = Y W_vocab
Causal exactly: position t reads the slot states of its own prefix.

Parameter names are attnlab's: the model sits under ``conn`` (conn.token.weight,
conn.position, conn.connection [h, N, N], conn.wq_in.weight, ..., conn.vocab_head.weight,
conn.norm0.weight, ...); conn.slots [N, D] is a fixed buffer (drawn at init, never trained),
part of the weights all the same.

attnlab draws no attention maps for this model (its panels show C); ``return_attention`` gives
an empty list. Hooks: conn.hook_compress and conn.hook_expand [B, L, N] (the two softmaxes over
slots), conn.hook_states [B, L, N, D] (the slot states after the K steps).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..hooks import HookPoint, run_with_cache


class ConnModel(nn.Module):
    def __init__(self, m, vocab, max_len):
        super().__init__()
        c, d = m["conn"], m["d_model"]
        if c["mixing"] == "literal" and c["slots"] != d:
            raise ValueError("model.conn.mixing \"literal\" needs model.conn.slots == d_model")
        self.o, self.d = c, d
        self.token = nn.Embedding(vocab, d)
        self.position = nn.Parameter(torch.randn(max_len, d) * 0.02)
        nn.init.normal_(self.token.weight, 0.0, 0.02)
        self.register_buffer("slots", torch.randn(c["slots"], d))
        self.connection = nn.Parameter(
            torch.randn(c["connection_heads"], c["slots"], c["slots"]) * c["init_std"])
        for name in ("wq_in", "wk_slots", "wv_in", "wq_out", "wk_final", "wv_final"):
            lin = nn.Linear(d, d, bias=False)
            nn.init.xavier_uniform_(lin.weight)
            setattr(self, name, lin)
        self.vocab_head = nn.Linear(d, vocab, bias=False)
        nn.init.normal_(self.vocab_head.weight, 0.0, 0.02)
        self.norms = []  # registered as norm0, norm1, ... (attnlab's names)
        for k in range(c["steps"]):
            self.add_module(f"norm{k}", nn.LayerNorm(d))
            self.norms.append(getattr(self, f"norm{k}"))
        self.hook_compress, self.hook_states = HookPoint(), HookPoint()
        self.hook_expand = HookPoint()

    def effective_connection(self):
        """The matrix every step uses: the mean of the connection heads, [N, N]."""
        return self.connection[0] if self.connection.shape[0] == 1 else self.connection.mean(0)

    def forward(self, tokens):
        L = tokens.shape[1]
        if L > self.position.shape[0]:
            raise ValueError(f"an input of {L} tokens is longer than the model's "
                             f"{self.position.shape[0]} positions")
        x = self.token(tokens) + self.position[:L]
        scale = 1.0 / math.sqrt(self.d)
        a = ((self.wq_in(x) @ self.wk_slots(self.slots).t()) * scale).softmax(-1)  # [B, L, N]
        a = self.hook_compress(a)
        h = self.slots + torch.cumsum(a.unsqueeze(-1) * self.wv_in(x).unsqueeze(2), 1)
        c = self.effective_connection()
        for norm in self.norms:
            infl = h @ c if self.o["mixing"] == "literal" else c.t() @ h
            h = norm(h + (F.gelu(infl) if self.o["variant"] == "nonlinear" else infl))
        h = self.hook_states(h)
        kf, vf = self.wk_final(h), self.wv_final(h)  # [B, L, N, D]
        att = ((kf @ self.wq_out(x).unsqueeze(-1)).squeeze(-1) * scale).softmax(-1)  # [B, L, N]
        att = self.hook_expand(att)
        return self.vocab_head((att.unsqueeze(-2) @ vf).squeeze(-2))

    def regularization(self):
        """lambda ||C||_F^2, which attnlab adds to the training loss."""
        return self.connection.pow(2).sum() * self.o["regularization"]

    @torch.no_grad()
    def apply_control(self):
        """The stability control attnlab applies to every head after each optimiser step, in
        float64 (spectral::apply_control): "norm-bound" scales I + C_j down to spectral norm
        `limit`, "spec" scales C_j so that rho(I + C_j) = `limit`, "none" does nothing."""
        control, limit = self.o["control"], self.o["limit"]
        if control == "none":
            return
        for j in range(self.connection.shape[0]):
            m = self.connection[j].double() + torch.eye(self.connection.shape[1],
                                                        dtype=torch.float64,
                                                        device=self.connection.device)
            if control == "spec":
                rho = torch.linalg.eigvals(m).abs().max().item()
                if rho > limit:
                    self.connection[j].mul_(limit / rho)
            else:
                s = torch.linalg.matrix_norm(m, ord=2).item()
                if s > limit:
                    self.connection[j].copy_(m * (limit / s) - torch.eye(m.shape[0], dtype=m.dtype,
                                                                          device=m.device))


class ConnTransformer(nn.Module):
    """The conn model behind attnlab's names (``conn.``), with the transformer's interface."""

    def __init__(self, m, vocab, max_len):
        super().__init__()
        self.conn = ConnModel(m, vocab, max_len)
        self.blocks = []

    def forward(self, inputs, return_attention=False):
        unbatched = inputs.dim() == 1
        logits = self.conn(inputs.unsqueeze(0) if unbatched else inputs)
        if unbatched:
            logits = logits[0]
        return (logits, []) if return_attention else logits

    def run_with_cache(self, inputs, names=None, detach=True):
        """(logits, {hook name: tensor}): hooks.run_with_cache (conn.hook_compress, ...)."""
        return run_with_cache(self, inputs, names, inputs.dim() == 1, detach)
