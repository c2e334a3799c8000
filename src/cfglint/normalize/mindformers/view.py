"""A view of one MindFormers YAML: where each knob lives in either dialect, its value or
the default of the class that reads it, and small readers shared by the section modules.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

from cfglint.load.mindformers_yaml import MindFormersYaml
from cfglint.load.yamltree import Node, get
from cfglint.model.errors import InputError
from cfglint.model.values import Loc, Value
from cfglint.normalize.mindformers.defaults import (
    REQUIRED,
    Component,
    Consulted,
    MFDefaults,
    coerce,
)
from cfglint.normalize.published import named_model

MAX_HF_CONFIG = 1024 * 1024


def is_v2_template(root: Node) -> bool:
    """The v2 template layout: top-level model_config / training_args sections."""
    top = root.value
    return "training_args" in top or ("model_config" in top and "model" not in top)


def is_mcore(root: Node) -> bool:
    """Whether the config builds MindFormers' Megatron-style (mcore) model: the v2 template,
    or ``use_legacy: False``."""
    legacy = get(root, "use_legacy")
    return is_v2_template(root) or (legacy is not None and legacy.value is False)


class MFView:
    """Lookups into one MindFormers config with positions and defaults."""

    def __init__(
        self,
        doc: MindFormersYaml,
        d: MFDefaults,
        model_path: str | None = None,
        consulted: Consulted | None = None,
    ) -> None:
        """``model_path``: where a layout of its own keeps the HF-style model keys (the
        pynative trainer's top-level ``model``), read as an mcore model. ``consulted``:
        records what the reading asks of ``d`` (defaults.Consulted); every component and
        the release come through comp, _model_class and release_in for that."""
        self.doc, self.d, self.root = doc, d, doc.root
        self.consulted = consulted
        self.warnings: list[str] = []
        self.v2 = model_path is None and is_v2_template(self.root)
        self.mcore = model_path is not None or is_mcore(self.root)
        self.model_path = model_path or ("model_config" if self.v2 else "model.model_config")
        self.model_node = self.node(self.model_path)
        self.hf: dict[str, Value] = {}
        # set when the architecture lives in a config.json we cannot read
        self.hf_missing = ""
        if self.mcore:
            self.hf = self._load_hf_config()
        self.model_cls = self._model_class()
        # A multimodal class (QwenVL, CogVLM2, Mllama) nests its language model under a
        # sub-config; the checklist compares that text model, so the view reads it, with the
        # outer keys the outer class passes down to it (knobs: legacy_classes.*.text_model).
        self.outer_path = ""
        self.outer_cls: Component | None = None
        self.outer: dict[str, str] = {}
        self._nest()

    # -- basic access -------------------------------------------------------------------
    def node(self, dotted: str) -> Node | None:
        return get(self.root, dotted)

    def value(self, node: Node, knob: str, kind: str | None = None) -> Value:
        loc = Loc.model_construct(path=node.path, line=node.line, column=node.column)
        if node.yaml11_string:
            return Value.written(node.value, knob=knob, loc=loc, raw=node.raw, yaml11_string=True)
        v = coerce(node.plain(), kind)
        wrong = _wrong_type(v, kind)
        if wrong:
            self.warnings.append(f"{loc}: {knob} is {wrong}")
            return Value.unknown(knob, f"{wrong} as written", loc=loc)
        return Value.written(v, knob=knob, loc=loc, raw=node.raw)

    def key(
        self,
        dotted: str,
        comp: Component | None,
        default_key: str | None = None,
        kind: str | None = None,
        fallback: Any = REQUIRED,
    ) -> Value:
        """``dotted`` as written, else ``comp``'s default for it, else ``fallback``."""
        n = self.node(dotted)
        if n is not None:
            return self.value(n, dotted, kind)
        k = default_key or dotted.rsplit(".", 1)[-1]
        if comp is not None and comp.unread:
            return Value.unknown(dotted, f"not set, and {comp.unread}")
        if comp is not None and comp.has(k):
            return Value.default(coerce(comp.defaults[k], kind), knob=dotted, source=comp.label)
        if fallback is not REQUIRED:
            return Value.default(fallback, knob=dotted, source="MindFormers")
        return Value.unknown(
            dotted, f"not set and {comp.label if comp else 'MindFormers'} has no default for it"
        )

    def comp(self, name: str, role: str) -> Component | None:
        if self.consulted is not None:
            return self.consulted.ask(name, role)
        return self.d.get(name, role)

    def release_in(self, releases: frozenset[str]) -> bool:
        """Whether the release the view reads at is one of ``releases`` (recorded)."""
        if self.consulted is not None:
            return self.consulted.release_in(releases)
        return self.d.project_version in releases

    @property
    def release_label(self) -> str:
        """The release the view reads at, for the words of a finding only: a reading that
        branches on it asks release_in (two releases read alike only where that agrees)."""
        return self.d.project_version

    # -- model config --------------------------------------------------------------------
    def _model_class(self) -> Component | None:
        if self.mcore:
            mt = self.mcore_raw("model_type")
            if mt is None or not mt.known:
                return None
            if self.consulted is not None:
                return self.consulted.ask_model_type(str(mt.value))
            return self.d.model_type(str(mt.value))
        t = self.node(f"{self.model_path}.type")
        return self.comp(str(t.value), "model_config_legacy") if t is not None else None

    def _nest(self) -> None:
        if self.mcore or self.model_cls is None:
            return
        facts = self.d.knobs["legacy_classes"].get(self.model_cls.name) or {}
        sub = facts.get("text_model")
        if not sub:
            return
        inner = self.node(f"{self.model_path}.{sub}")
        self.outer_path, self.outer_cls = self.model_path, self.model_cls
        self.outer = dict(facts.get("outer") or {})
        self.model_path = f"{self.model_path}.{sub}"
        self.model_node = inner
        t = self.node(f"{self.model_path}.type")
        self.model_cls = self.comp(str(t.value), "model_config_legacy") if t is not None else None

    def arch_fact(self, fact: str, knob: str) -> Value | None:
        """A value the class in ``model.arch.type`` fixes (knobs: arch_classes), which wins
        over the config class's: the job instantiates the arch class, and research classes
        build on LlamaConfig with their own attention and head. Unknown for a shared config
        class whose arch class has no facts; None where the config class's facts apply."""
        if self.mcore or self.outer_cls is not None:
            return None
        table = self.d.knobs.get("arch_classes") or {}
        t = self.node("model.arch.type")
        name = "" if t is None or t.value in (None, "") else str(t.value)
        entry = (table.get("classes") or {}).get(name)
        if entry is not None and fact in entry:
            value, why = entry[fact]
            return Value.derived(
                value,
                "model.arch.type",
                f"{name}: {why}",
                [self.value(t, "model.arch.type")],  # type: ignore[arg-type]
            )
        shared = self.model_cls is not None and self.model_cls.name in table.get(
            "shared_configs", ()
        )
        if shared and name and entry is None:
            return Value.unknown(
                "model.arch.type",
                f"{name} is a class cfglint has no facts for, and research classes built on "
                f"{self.model_cls.name} fix their own {fact}",  # type: ignore[union-attr]
            )
        return None

    def no_class_reason(self) -> str:
        """Why no class tables apply: the type is left empty (a template to fill in) or
        names a class cfglint has no tables for."""
        t = self.node(f"{self.model_path}.type")
        if self.model_node is None:
            return f"the file has no {self.model_path} section, so no model settings"
        if t is None or t.value in (None, ""):
            return (
                f"{self.model_path}.type is not given: the template leaves the model to be "
                "filled in, so its settings depend on the model the user picks"
            )
        return "not set, and the model class is not one cfglint knows"

    def _outer(self, keys: list[str], kind: str | None) -> Value | None:
        """A key the outer multimodal class passes down to its text model: written at the
        outer level, or (mode ``always``) the outer class's default overriding the inner."""
        for k in keys:
            mode = self.outer.get(k)
            if mode is None:
                continue
            n = self.node(f"{self.outer_path}.{k}")
            if n is not None:
                return self.value(n, f"{self.outer_path}.{k}", kind)
            oc = self.outer_cls
            if mode == "always" and oc is not None and k in oc.defaults:
                return Value.default(
                    coerce(oc.defaults[k], kind),
                    knob=f"{self.outer_path}.{k}",
                    source=f"{oc.label} (passed down to the text model)",
                )
        return None

    def legacy(self, keys: list[str], kind: str | None, field: str = "") -> Value:
        if field:
            keys = self.keys_for(field, keys)
        # no key at all: the class has none for this field, only a class fact can say
        knob = f"{self.model_path}.{keys[0]}" if keys else field
        if self.outer:
            v = self._outer(keys, kind)
            if v is not None:
                return v
        for k in keys:
            n = self.node(f"{self.model_path}.{k}")
            if n is not None:
                return self.value(n, f"{self.model_path}.{k}", kind)
        # the class, then the classes it passes its keyword arguments on to
        for comp in self.class_chain():
            for k in keys:
                if k in comp.defaults:
                    return Value.default(
                        coerce(comp.defaults[k], kind),
                        knob=knob,
                        source=comp.label,
                    )
        return self._legacy_unset(keys, kind, field, knob)

    def _legacy_unset(self, keys: list[str], kind: str | None, field: str, knob: str) -> Value:
        """A legacy setting neither the YAML nor a class table gives: unknown with the
        reason, or the class's recorded absence of it (knobs: legacy_classes ``absent``)."""
        cls = self.model_cls
        if cls is None:
            return Value.unknown(knob, self.no_class_reason())
        if cls.unread and any(
            k in (c.raw.get("defaults") or {}) for c in self.class_chain() for k in keys
        ):
            return Value.unknown(knob, f"not set, and {cls.unread}")
        absent = (self.d.knobs["legacy_classes"].get(cls.name) or {}).get("absent") or {}
        if field in absent:
            value, why = absent[field]
            if value in ("no_knob", "not_applicable"):
                value = None  # emptied with its reason once the config is read (build.py)
            return Value.default(
                coerce(value, kind) if value is not None else None,
                knob=knob,
                source=f"{cls.label} (no such setting: {why})",
            )
        return Value.unknown(knob, f"{cls.name} has no such setting")

    def class_chain(self) -> list[Component]:
        """The legacy model class and its bases that cfglint has tables for."""
        out: list[Component] = []
        cls = self.model_cls
        while cls is not None and cls not in out:
            out.append(cls)
            bases = cls.raw.get("bases") or []
            cls = next((b for b in (self.comp(x, "model_config_legacy") for x in bases) if b), None)
        return out

    def mcore_raw(self, field: str, kind: str | None = None) -> Value | None:
        """A TransformerConfig field as written in YAML or config.json (after renames)."""
        n = self.model_node
        hits: list[tuple[str, Node]] = []
        if n is not None and n.is_map:
            hits = [(k, v) for k, v in n.value.items() if self.d.canonical(k) == field]
        # the trainer flattens top-level moe_config items into the model arguments
        moe = self.node("moe_config")
        if moe is not None and moe.is_map:
            hits += [
                (f"moe_config.{k}", v) for k, v in moe.value.items() if self.d.canonical(k) == field
            ]
        if hits:
            if len(hits) > 1:
                names = ", ".join(k for k, _ in hits)
                self.warnings.append(
                    f"{self.doc.path}: {names} all set {field}; MindFormers "
                    "refuses two keys for the same field"
                )
            k, node = hits[-1]
            knob = k if k.startswith("moe_config.") else f"{self.model_path}.{k}"
            return self._transform(k, self.value(node, knob, kind))
        for k, v in self.hf.items():
            if self.d.canonical(k) == field:
                wrong = _wrong_type(coerce(v.value, kind), kind)
                if wrong:
                    return Value.unknown(v.knob, f"{wrong} in config.json", loc=v.loc)
                return self._transform(k, v)
        return None

    def mcore_field(self, field: str, kind: str | None = None, mla: bool = False) -> Value:
        """``field`` as written (YAML, config.json), else the class's default; ``mla``: the
        model is converted with is_mla_model=True, so MLATransformerConfig's defaults sit
        between the class's and TransformerConfig's (models/model_config_utils.py
        convert_to_transformer_config @ f52743ca)."""
        v = self.mcore_raw(field)
        if v is not None:
            return (
                v.model_copy(update={"value": coerce(v.value, kind)}) if not v.yaml11_string else v
            )
        knob = f"{self.model_path}.{field}"
        if self.hf_missing:
            return Value.unknown(knob, self.hf_missing)
        return self.class_default(field, kind, mla)

    def class_default(self, field: str, kind: str | None = None, mla: bool = False) -> Value:
        """``field`` as the model class sets it (its defaults < MFModelConfig <
        TransformerConfig), without looking at config.json."""
        knob = f"{self.model_path}.{field}"
        chain = [
            self.model_cls,
            self.comp("MFModelConfig", "model_config"),
            self.comp("MLATransformerConfig", "model_config") if mla else None,
            self.comp("TransformerConfig", "model_config"),
        ]
        for comp in chain:
            if comp is None or (comp.missing and comp is not self.model_cls):
                # a base the release does not have gives nothing: from v1.9.0 on no
                # MFModelConfig sits between the model class and TransformerConfig
                # (models/model_config_utils.py:182-213 @ mindformers-1.9.0.whl)
                continue
            for k, dv in comp.defaults.items():
                if self.d.canonical(k) == field and dv != REQUIRED:
                    return Value.default(
                        coerce(self._apply(k, dv), kind), knob=knob, source=comp.label
                    )
        unread = next((c.unread for c in chain if c is not None and c.unread), "")
        why = (
            f"not set, and {unread}"
            if unread
            else f"no default for TransformerConfig field {field}"
        )
        return Value.unknown(knob, why)

    def _transform(self, key: str, v: Value) -> Value:
        if v.yaml11_string or not v.known:
            return v
        return v.model_copy(update={"value": self._apply(key, v.value)})

    def _apply(self, key: str, value: Any) -> Any:
        fn = self.d.tc_transforms.get(key)
        if fn == "is_float_32":
            if isinstance(value, bool):
                return value
            return str(value).lower() in ("float32", "fp32")
        if fn == "is_use_gated_sigmoid" and isinstance(value, bool):
            return "sigmoid" if value else "softmax"
        if fn == "get_drop_policy" and isinstance(value, bool):
            return "position" if value else "probs"
        return value

    def facts(self) -> dict[str, Any]:
        """cfglint's facts about the legacy model class (data/mindformers_knobs.yaml)."""
        if self.mcore or self.model_cls is None:
            return {}
        return self.d.knobs["legacy_classes"].get(self.model_cls.name) or {}

    def keys_for(self, field: str, keys: list[str]) -> list[str]:
        """The keys that set ``field`` in this class: the class's own spelling when the facts
        give one (BERT's num_hidden_layers), else the common list."""
        own = (self.facts().get("keys") or {}).get(field)
        return list(own) if own is not None else keys

    def model(self, field: str) -> Value | None:
        spec = self.d.knobs["model_fields"][field]
        kind = spec.get("as")
        if self.mcore:
            return None if spec.get("mcore") is None else self.mcore_field(spec["mcore"], kind)
        keys = self.keys_for(field, spec["legacy"])
        absent = (self.facts().get("absent") or {}).get(field, [None])[0]
        if absent == "not_applicable":
            return None  # whatever the YAML writes (a per-stage list in Swin, say)
        if absent == "no_knob" and not any(
            self.node(f"{self.model_path}.{k}") is not None for k in keys
        ):
            return None
        return self.legacy(keys, kind, field)

    def _load_hf_config(self) -> dict[str, Value]:
        n = self.node("pretrained_model_dir")
        if n is None or not isinstance(n.value, str) or not n.value:
            return {}
        base = n.value
        candidates = [base, os.path.join(os.path.dirname(self.doc.path), base)]
        for d in candidates:
            path = os.path.join(d, "config.json")
            if os.path.isfile(path):
                return _read_hf_config(path)
        self.hf_missing = (
            f"not in the YAML; MindFormers reads it from {base}/config.json "
            f"(pretrained_model_dir, {n.path}:{n.line}), which is not available here"
        )
        published = self._published_hf(n, base)
        self.warnings.append(
            f"{n.path}:{n.line}: pretrained_model_dir {base!r} is not here; "
            + (
                f"the architecture is read from the published {published[0]} config.json it "
                "names, the other settings MindFormers would read from it are unknown"
                if published[1]
                else "the model settings MindFormers would read from its config.json are unknown"
            )
        )
        return published[1]

    def _published_hf(self, n: Node, base: str) -> tuple[str, dict[str, Value]]:
        """The config.json keys of the published model a missing pretrained_model_dir names
        ("/path/to/Qwen3-32B"), from data/reference_models.yaml: MindFormers builds an HF-style
        model from that file (precedence YAML model_config > config.json > the config class's
        own defaults, data/mindformers.yaml default_notes), and the published file is what the
        directory holds for a model of that name. Only the architecture keys the table
        records; anything else stays unknown (hf_missing)."""
        hit = named_model(os.path.basename(base.rstrip("/")))
        if hit is None:
            return "", {}
        ref, alias = hit
        where = self.value(n, "pretrained_model_dir")
        out: dict[str, Value] = {}
        for key, hf_key in _PUBLISHED_HF_KEYS.items():
            if key not in ref or (key == "norm_epsilon" and ref.get("normalization") != "RMSNorm"):
                continue
            out[hf_key] = Value.derived(
                ref[key],
                f"config.json {hf_key}",
                f"the published {ref['name']} config.json ({ref.get('source', '')}), which "
                f"pretrained_model_dir names ({alias!r}); the file itself is not here",
                [where],
            )
        return ref["name"], out


def as_int(v: Value | None) -> int | None:
    """The value when it is a usable integer (not a bool, not a PyYAML string), else None."""
    if v is None or not v.known or isinstance(v.value, bool) or not isinstance(v.value, int):
        return None
    return v.value


def _wrong_type(v: Any, kind: str | None) -> str:
    """Why ``v`` cannot be the ``kind`` a setting needs ("" when it can)."""
    if v is None or kind is None:
        return ""
    if kind in ("int", "float") and (isinstance(v, bool) or not isinstance(v, (int, float))):
        return f"{v!r}, not a number"
    if kind == "int" and isinstance(v, float) and not math.isfinite(v):
        return f"{v!r}, not a finite number"
    if kind == "bool" and not isinstance(v, bool):
        return f"{v!r}, not true or false"
    if kind == "dtype" and not isinstance(v, str):
        return f"{v!r}, not a dtype name"
    return ""


# reference_models.yaml keys -> the config.json key an HF-style MindFormers model reads
_PUBLISHED_HF_KEYS = {
    "num_layers": "num_hidden_layers",
    "hidden_size": "hidden_size",
    "num_heads": "num_attention_heads",
    "num_query_groups": "num_key_value_heads",
    "kv_channels": "head_dim",
    "ffn_hidden_size": "intermediate_size",
    "vocab_size": "vocab_size",
    "norm_epsilon": "rms_norm_eps",
    "rope_theta": "rope_theta",
    "max_position_embeddings": "max_position_embeddings",
    "tied_embeddings": "tie_word_embeddings",
    "hidden_act": "hidden_act",
    # picks the HF-style config class (and with it its class-level settings, such as
    # Qwen3's gated MLP), as the real config.json's model_type would
    "model_type": "model_type",
}


def _read_hf_config(path: str) -> dict[str, Value]:
    from cfglint.load.safeio import read_text

    text = read_text(path, max_bytes=MAX_HF_CONFIG, what="HF config.json")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputError(path, f"invalid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(path, "config.json must hold an object")
    lines = text.splitlines()
    out: dict[str, Value] = {}
    for k, v in data.items():
        if isinstance(v, (dict, list)) and k not in ("architectures", "rope_scaling"):
            continue
        line = next((i for i, ln in enumerate(lines, 1) if f'"{k}"' in ln), 1)
        out[k] = Value.written(
            v, knob=f"config.json {k}", loc=Loc.model_construct(path=path, line=line)
        )
    return out


def as_bool(v: Value) -> bool:
    return bool(v.value) if v.known else False


def first_written(view: MFView, keys: list[str], kind: str) -> Value | None:
    for k in keys:
        n = view.node(k)
        if n is not None:
            return view.value(n, k, kind)
    return None


def fixed(view: MFView, value: Any, what: str) -> Value:
    cls = view.model_cls
    return Value.default(
        value, knob=what, source=f"{cls.label if cls else 'MindFormers'} (fixed by the model class)"
    )


def class_fact(view: MFView, facts: dict[str, Any], fact: str, knob: str) -> Value:
    spec = facts.get(fact)
    if spec is None:
        if view.model_cls is None:
            return Value.unknown(knob, view.no_class_reason())
        return Value.unknown(knob, f"cfglint has no fact for the {fact} of {view.model_cls.name}")
    if isinstance(spec, dict):
        v = view.legacy([spec["key"]], None)
        if not v.known:
            return v
        if "true" in spec:
            mapped = spec["true"] if v.value else spec["false"]
            return v.model_copy(update={"value": mapped})
        return v
    return fixed(view, spec, knob)


def class_default(comp: Component | None, key: str, knob: str, fallback: Any = REQUIRED) -> Value:
    if comp is not None and comp.unread:
        return Value.unknown(knob, f"not set, and {comp.unread}")
    if comp is not None and comp.has(key) and comp.defaults[key] is not None:
        return Value.default(comp.defaults[key], knob=knob, source=comp.label)
    if fallback is not REQUIRED:
        return Value.default(fallback, knob=knob, source=comp.label if comp else "MindFormers")
    if comp is not None and comp.defaults.get(key, REQUIRED) is None:
        return Value.default(None, knob=knob, source=comp.label)
    return Value.unknown(knob, f"not set and {comp.label if comp else 'the schedule'} requires it")


# mcore classes that MindFormers builds with is_mla_model=True (@ f52743ca:
# models/deepseek3/modeling_deepseek_v3_train.py:32,
# models/telechat3/modeling_telechat3_train.py:32; @ mindformers-2.1.0.whl:
# models/telechat3_moe/modeling_telechat3_moe_train.py:32,
# models/deepseek4/modeling_deepseek_v4_pynative.py:36), with the releases where the class
# is so built when not all: from v1.9.0 on TeleChat3Config is a dense model built with
# is_mla_model=False (models/telechat3/modeling_telechat3_train.py:32 @ mindformers-1.9.0.whl)
_MCORE_MLA: dict[str, frozenset[str] | None] = {
    "DeepseekV3Config": None,
    "TeleChat3Config": frozenset(("v1.6.0", "v1.7.0", "master")),
    "TeleChat3MoeConfig": None,
    "DeepseekV4Config": None,
}


def builds_mla(view: MFView, cls: str | None) -> bool:
    """Whether the mcore model class ``cls`` builds multi-latent attention at the release
    the view reads."""
    if cls not in _MCORE_MLA:
        return False
    releases = _MCORE_MLA[cls]
    return releases is None or view.release_in(releases)
