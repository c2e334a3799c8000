"""Which code draws the order of the training samples, in one vocabulary for both sides.
Two runs with the same seed read the samples in the same order only when the same algorithm
draws it: Megatron's GPT dataset shuffle index (numpy RandomState over the sample index,
megatron/core/datasets/gpt_dataset.py @ core_v0.12.1; MindFormers' Megatron-dataset loader
builds the same GPTDataset), MindSpeed-LLM's instruction dataset (numpy over the documents,
decoder_packed_mtf_dataset.py:449-454 @ c77308a1), MindSpore's dataset sampler (MindDataset,
GeneratorDataset shuffle=True) and the Hugging Face datasets shuffle handler are four
different functions of the seed."""

from __future__ import annotations

IN_ORDER = "in order"
GPT_DATASET = "Megatron GPT dataset shuffle index"
MSL_INSTRUCTION = "MindSpeed-LLM instruction dataset shuffle (numpy, per document)"
MINDSPORE_SAMPLER = "MindSpore dataset sampler"
HF_SHUFFLE = "Hugging Face datasets shuffle handler"
