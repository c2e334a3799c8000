"""Megatron arguments -> the normalized model, post-processed the way Megatron does it.

Facts follow ``validate_args``, ``core_transformer_config_from_args`` and
``TransformerConfig.__post_init__`` of the release in the argument table (see
``data/megatron_lm_*.yaml``); MindSpeed-LLM's deviations are noted where they apply.
One module per checklist section does the reading.
"""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.normalize.anchors import command_section
from cfglint.normalize.balancing import fold_single_sequence
from cfglint.normalize.megatron.input import MegatronInput
from cfglint.normalize.megatron.launch import read_launch
from cfglint.normalize.megatron.moe import read_moe
from cfglint.normalize.megatron.optimizer import read_optimizer
from cfglint.normalize.megatron.other import read_other
from cfglint.normalize.megatron.parallel import read_parallel
from cfglint.normalize.megatron.precision import read_precision
from cfglint.normalize.megatron.release_note import release_gaps, release_note, script_fit
from cfglint.normalize.megatron.rope import read_rope
from cfglint.normalize.megatron.structure import read_structure
from cfglint.normalize.sharding import one_shard


def normalize_megatron(m: MegatronInput) -> Config:
    cfg = Config.create(
        side="megatron",
        path=m.path,
        kind=m.kind,
        defaults_from=m.table.label,
        side_label=m.dialect.side_label if m.dialect else "",
        dialect_name=m.dialect.name if m.dialect else "",
        dialect=(
            f"{m.dialect.label} ({'; '.join(m.evidence)})" if m.dialect and m.evidence else ""
        ),
        env=dict(m.env),
        env_hidden=m.env_hidden,
        unknown=list(m.unknown),
        files=[m.path],
        launch_script=m.path if m.kind.endswith("script") else "",
        sections=command_section(m.path, m.command_loc),
    )
    cfg.warnings.extend(m.warnings)
    fit = script_fit(m)
    if fit is not None:
        m.release_gaps = release_gaps(m, fit)
        if m.release_gaps:
            m.release_span = f"{fit.project} {fit.span if fit.releases else ', '.join(fit.heads)}"
        note = release_note(m, fit, m.release_gaps)
        if note is not None:
            cfg.warnings.append(note)
    read_parallel(m, cfg)
    one_shard(cfg)
    read_structure(m, cfg)
    read_rope(m, cfg)
    read_moe(m, cfg)
    read_optimizer(m, cfg)
    fold_single_sequence(cfg)
    read_precision(m, cfg)
    read_other(m, cfg)
    read_launch(m, cfg)
    return cfg
