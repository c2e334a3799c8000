"""Stage 3 of the accuracy guide: two long runs compared step by step."""
