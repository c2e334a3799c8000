"""Error findings of the dialect sweep (bench/dialect_trials.md): each real fork script,
linted against a matching MindFormers corpus config, from its repository's root (paths in
the scripts are relative to it). The scripts come from /tmp/dtr/<owner+repo>/ (extracted
from the mirrors at the commits the table records, with the files that mark each repository's
layout; never committed).

    PYTHONPATH=src python bench/dialect_trials.py [ROOT]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

CORPUS = "/work/shared/corpus/mindformers"
TRIALS = [
    (
        "alibaba+Megatron-LLaMA",
        "examples/LLaMA/LLaMA2_7B_standalone.sh",
        "configs__llama2__pretrain_llama2_7b_bf16.yaml",
    ),
    (
        "microsoft+Megatron-DeepSpeed",
        "examples_deepspeed/pretrain_llama2_distributed.sh",
        "configs__llama2__pretrain_llama2_7b_bf16.yaml",
    ),
    (
        "bigcode-project+Megatron-LM",
        "examples/pretrain_gpt_1B_santacoder.sh",
        "configs__gpt2__run_gpt2.yaml",
    ),
    (
        "Ascend+MindSpeed",
        "tests_extend/system_tests/mixtral/pretrain_mixtral.sh",
        "research__mixtral__mixtral_8x7b__pretrain_mixtral-8x7b.yaml",
    ),
    (
        "Ascend+MindSpeed-MM",
        "examples/qwen2.5vl/finetune_qwen2_5_vl_7b.sh",
        "configs__qwen3__finetune_qwen3_32b_4k.yaml",
    ),
    # second round: more scripts of the same repositories
    (
        "alibaba+Megatron-LLaMA",
        "examples/LLaMA/LLaMA_13_standalone.sh",
        "configs__llama2__pretrain_llama2_13b_bf16.yaml",
    ),
    (
        "microsoft+Megatron-DeepSpeed",
        "examples_deepspeed/MoE/ds_pretrain_gpt_125M_MoE64.sh",
        "configs__gpt2__run_gpt2.yaml",
    ),
    (
        "microsoft+Megatron-DeepSpeed",
        "examples_deepspeed/universal_checkpointing/llama/run_llama_bf16.sh",
        "configs__llama2__pretrain_llama2_7b_bf16.yaml",
    ),
    (
        "microsoft+Megatron-DeepSpeed",
        "examples_deepspeed/pretrain_llama_distributed.sh",
        "configs__llama2__pretrain_llama2_7b_bf16.yaml",
    ),
    (
        "bigcode-project+Megatron-LM",
        "examples/pretrain_bigcode_1b.slurm",
        "configs__gpt2__run_gpt2.yaml",
    ),
    (
        "Ascend+MindSpeed",
        "tests_extend/system_tests/llama2/pretrain_llama2_70B_4k_tp2_pp2_vpp1_dp2.sh",
        "configs__llama2__pretrain_llama2_70b_bf16_32p.yaml",
    ),
    (
        "Ascend+MindSpeed",
        "tests_extend/system_tests/gpt/pretrain_gpt_megatron_moe_8k.sh",
        "research__mixtral__mixtral_8x7b__pretrain_mixtral-8x7b.yaml",
    ),
    (
        "Ascend+MindSpeed",
        "tests_extend/system_tests/llama3/pretrain_llama3_8b_ptd.sh",
        "research__llama3_1__llama3_1_8b__finetune_llama3_1_8b.yaml",
    ),
    (
        "Ascend+MindSpeed-MM",
        "examples/qwen2.5vl/finetune_qwen2_5_vl_72b.sh",
        "configs__qwen3__finetune_qwen3_32b_4k.yaml",
    ),
    # Pai-Megatron-Patch: the backend its script puts on PYTHONPATH decides the table
    (
        "alibaba+Pai-Megatron-Patch",
        "examples/qwen3/run_mcore_qwen3.sh",
        "configs__qwen3__pretrain_qwen3_32b_4k.yaml",
    ),
    (
        "alibaba+Pai-Megatron-Patch",
        "examples/qwen2_5/run_mcore_qwen.sh",
        "configs__qwen3__pretrain_qwen3_32b_4k.yaml",
    ),
    # third round (this file's section in bench/classify_trials.md): forks nobody had linted,
    # each read from its own tree (full checkouts: the tree's parser decides the dialect)
    (
        "alibaba+Megatron-LLaMA",
        "examples/pretrain_gpt_distributed.sh",
        "configs__gpt2__run_gpt2.yaml",
    ),
    (
        "alibaba+Megatron-LLaMA",
        "examples/pretrain_gpt_distributed_with_mp.sh",
        "configs__gpt2__pretrain_gpt2_13b_fp16.yaml",
    ),
    (
        "alibaba+Megatron-LLaMA",
        "tests/functional_tests/test_scripts/gpt3/pretrain_gpt3_distributed_test.sh",
        "configs__gpt2__run_gpt2.yaml",
    ),
    ("THUDM+GLM", "scripts/finetune_superglue.sh", "configs__glm3__finetune_glm3_6b_bf16.yaml"),
    ("THUDM+GLM", "scripts/finetune_seq2seq.sh", "configs__glm4__finetune_glm4_9b.yaml"),
    (
        "THUDM+CodeGeeX",
        "scripts/pretrain_codegeex.sh",
        "configs__gpt2__pretrain_gpt2_13b_fp16.yaml",
    ),
    (
        "yandex+YaLM-100B/megatron_lm",
        "examples/ds_pretrain_gpt2.sh",
        "configs__gpt2__run_gpt2.yaml",
    ),
    (
        "yandex+YaLM-100B/megatron_lm",
        "examples/pretrain_gpt2_distributed.sh",
        "configs__gpt2__run_gpt2.yaml",
    ),
    (
        "NVIDIA+NeMo",
        "tests/collections/llm/bitexact/mixtral/run.sh",
        "research__mixtral__mixtral_8x7b__pretrain_mixtral-8x7b.yaml",
    ),
]


def run(root: str) -> None:
    for repo, script, cfg in TRIALS:
        here = os.path.join(root, repo)
        cmd = [sys.executable, "-m", "cfglint", "--format", "json"]
        if cfg:
            cmd.append(os.path.join(CORPUS, cfg))
        cmd += ["--megatron", script]
        env = dict(os.environ, PYTHONPATH=os.path.abspath("src"))
        out = subprocess.run(cmd, cwd=here, capture_output=True, text=True, env=env)
        try:
            doc = json.loads(out.stdout)
        except json.JSONDecodeError:
            print(f"## {repo} {script}: no JSON (rc {out.returncode}) {out.stderr[-300:]}")
            continue
        errs = [f for f in doc["findings"] if f["severity"] == "error"]
        print(f"## {repo} {script} ({len(errs)} errors)")
        for f in errs:
            print(f"- {f['rule']} {f['row']}: {f['message'][:700]}")


if __name__ == "__main__":
    run(sys.argv[1] if len(sys.argv) > 1 else "/tmp/dtr")
