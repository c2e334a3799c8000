"""The output head in one form for both sides: "plain", a linear layer over the vocabulary
(Megatron's output_layer, MindSpore's lm_head Linear), or "row-normalized", Baichuan2's
NormHead, which divides each vocabulary row by its L2 norm in every training forward pass
(the head's effective weights then have unit rows whatever the optimizer does to them)."""

from __future__ import annotations

PLAIN_HEAD = "plain"
