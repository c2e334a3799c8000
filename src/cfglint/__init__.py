"""cfglint: find the configuration causes of loss-curve mismatches between
Megatron-LM / MindSpeed-LLM and MindFormers training jobs."""

__version__ = "0.1.0"
