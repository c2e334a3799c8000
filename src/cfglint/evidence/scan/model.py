"""Result types of the source scanner.

Two layers:

* per-file summaries (:class:`FileSummary`), computed from one file's text alone and cached
  on disk keyed by a hash of that text. They hold no path, so a file moved or copied keeps
  its cache entry; everything that needs the path (relative imports, module names) is
  worked out when the summaries are linked.
* the linked result (:class:`ScanResult`): entry points with the seeding they reach, and
  the dropout, weight-decay and custom-backward sites, each with its file path.

Nothing here imports the scanner: the plain config lint imports the checks, which import this.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cfglint.model.findings import InputProblem
from cfglint.model.values import Loc

# Bump when the scanner's output for the same text changes: it is part of the cache key.
SCANNER_VERSION = "11"

# Which side of a migration a file belongs to, judged by what it imports.
Side = Literal["mindformers", "megatron"]

# What a seeding / determinism call does.
EffectKind = Literal[
    "random",  # random.seed
    "pythonhashseed",  # PYTHONHASHSEED in the environment
    "numpy",  # np.random.seed
    "torch",  # torch.manual_seed (all devices)
    "cuda",  # torch.cuda.manual_seed(_all)
    "npu",  # torch_npu.npu.manual_seed(_all)
    "mindspore",  # mindspore.set_seed
    "torch_deterministic",  # torch.use_deterministic_algorithms
    "cudnn_deterministic",  # torch.backends.cudnn.deterministic
    "cudnn_benchmark",  # torch.backends.cudnn.benchmark (True is non-deterministic)
    "mindspore_deterministic",  # set_context(deterministic=...) / set_deterministic
    "seed_helper",  # a library's seeding helper cfglint has no model of: seeding unknown
]

DecayPolicy = Literal[
    "decay_all",  # every parameter decayed
    "exclude_bias",  # biases skipped by name
    "exclude_1d",  # 1-D parameters skipped by shape (biases and norm weights)
    "exclude_by_name",  # a list of name fragments skipped
    "explicit_groups",  # hand-made groups whose membership cannot be read statically
    "exclude_module_types",  # biases and the weights of listed module types (minGPT)
]


class SrcLoc(BaseModel):
    model_config = ConfigDict(frozen=True)

    line: int
    column: int = 1


class Arg(BaseModel):
    """One argument as written: a literal, a parameter of the enclosing function, a
    value taken from the run's configuration, or some other expression."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["literal", "param", "config", "expr", "default", "instance", "ref", "dict"]
    # dict: the integer entries of a dict literal, as ((key, value), ...)
    value: Any = None
    # the source text (expr), the parameter name (param), the config knob (config), the
    # class of an instance as written (instance: `fabric` after `fabric = L.Fabric()`), or
    # a function or class handed over as a value (ref: `trainer_cls=MyTrainer`)
    text: str = ""
    # `1337 + fabric.global_rank`: the base is the literal or parameter, this the rest
    offset: str = ""
    # param: the literal key read from it (`config["seed"]`, `config.get("seed")`)
    key: str = ""


class Effect(BaseModel):
    """A seeding or determinism switch found in code."""

    kind: EffectKind
    api: str  # "torch.manual_seed", "megatron.training.pretrain", ...
    loc: SrcLoc
    seed: Arg | None = None
    # deterministic switches: True/False when written as a literal, None when computed
    enabled: bool | None = True
    # set when the effect depends on a config knob (Megatron --deterministic-mode, ...):
    # the normalized field, e.g. "determinism.deterministic"
    config_field: str | None = None
    # MindFormers' Trainer seeds only when the configured seed is non-zero
    needs_nonzero_seed: bool = False
    conditional: bool = False
    # the innermost `if` test it sits behind, as written ("args.seed is not None")
    condition: str = ""
    note: str = ""
    # the call as written when it is a modelled framework function (megatron pretrain): the model
    # holds only when the call really goes into that framework
    modelled: str = ""


class CallSite(BaseModel):
    """A call to something that may be defined in another scanned file."""

    target: str  # dotted as written, `self.x` rewritten to `Class.x`
    loc: SrcLoc
    args: list[Arg] = Field(default_factory=list)
    kwargs: dict[str, Arg] = Field(default_factory=dict)
    conditional: bool = False
    # a function handed to another call (mp.spawn(worker), fire.Fire(main),
    # Thread(target=run)): it is run by that call, with arguments we cannot see
    indirect: bool = False
    condition: str = ""  # the innermost `if` test, when conditional
    # a modelled framework call: followed only when it resolves to a scanned package
    # that merely shares the framework's name (gpt-neox's own `megatron/`)
    modelled: bool = False
    # one value of a table of commands handed to a CLI dispatcher (jsonargparse.CLI(dict),
    # fire.Fire(dict)): the command name that selects it
    command: str = ""
    # arguments (positional index as a string, or keyword) that hold every parameter of
    # a model (`model.parameters()`): an optimizer helper given one decays what it builds on
    all_params: list[str] = Field(default_factory=list)


class Evidence(BaseModel):
    model_config = ConfigDict(frozen=True)

    loc: SrcLoc
    text: str


class GroupEvidence(BaseModel):
    """What a function does that looks like building optimizer parameter groups."""

    shape: list[Evidence] = Field(default_factory=list)  # p.dim() < 2, p.ndim == 1, ...
    names: list[str] = Field(default_factory=list)  # name fragments tested ("bias", ...)
    name_evidence: list[Evidence] = Field(default_factory=list)
    # weight_decay values of group dicts ({"params": ..., "weight_decay": 0.0})
    group_decays: list[Arg] = Field(default_factory=list)
    group_evidence: list[Evidence] = Field(default_factory=list)
    # module classes whose weights are put in the no-decay set (minGPT's blacklist)
    module_types: list[str] = Field(default_factory=list)
    module_evidence: list[Evidence] = Field(default_factory=list)

    def empty(self) -> bool:
        return not (self.shape or self.names or self.group_decays or self.module_types)


class FunctionSummary(BaseModel):
    qualname: str
    loc: SrcLoc
    params: list[str] = Field(default_factory=list)
    defaults: dict[str, Arg] = Field(default_factory=dict)
    # parameter -> class as annotated (`fabric: L.Fabric`), resolved in this file when linking
    param_types: dict[str, str] = Field(default_factory=dict)
    effects: list[Effect] = Field(default_factory=list)
    calls: list[CallSite] = Field(default_factory=list)
    groups: GroupEvidence | None = None
    # trains: applies an update (an optimizer step, a hand-written `p -= lr * p.grad`, a
    # framework training call); a backward pass alone does not
    trains: bool = False
    # computes gradients (loss.backward(), value_and_grad): at top level, a script that
    # can be started (nanoGPT-style trainers have no main block)
    gradients: bool = False
    # a custom backward (torch.autograd.Function.backward, MindSpore bprop)
    backward: bool = False
    # transposed operands fed to a matmul outside a backward: reported when a backward
    # calls this function
    tmatmuls: list[BackwardSite] = Field(default_factory=list)
    # an optimizer built over one of this function's parameters (litgpt's
    # instantiate_torch_optimizer(optimizer, model_parameters)): params_text names that
    # parameter; the callers' arguments say which parameters are decayed
    builds: DecaySite | None = None


class ImportRef(BaseModel):
    """``import a.b as x`` -> (0, "a.b", None); ``from ..m import f`` -> (2, "m", "f")."""

    model_config = ConfigDict(frozen=True)

    level: int = 0
    module: str = ""
    name: str | None = None


class DropoutSite(BaseModel):
    loc: SrcLoc
    api: str  # qualified: "torch.nn.Dropout", "mindspore.nn.Dropout", ...
    p: float  # drop probability (keep_prob converted)
    text: str  # the call as written
    how: Literal["default", "p", "keep_prob"]
    function: str = "<module>"  # enclosing function: reported only when an entry reaches it


class DecaySite(BaseModel):
    """An optimizer construction and how its parameter list was built."""

    loc: SrcLoc
    function: str = "<module>"  # enclosing function, to resolve params_from locally
    optimizer: str
    framework: Literal["torch", "mindspore", "unknown"] = "unknown"
    policy: DecayPolicy | None = None
    # the params came from a call to this function (resolved when linking)
    params_from: str | None = None
    params_text: str = ""
    weight_decay: Arg | None = None
    names: list[str] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    detail: str = ""
    # a library groups the parameters itself (timm's factory, the transformers Trainer):
    # weight_decay is then the decayed group's value, so 0 decays nothing, and a value
    # cfglint could not read leaves the policy undecided (`detail` says why)
    library: bool = False


class BackwardSite(BaseModel):
    loc: SrcLoc
    function: str  # "LinearWithGrad.backward"
    transposed: str  # the transposed operand as written
    matmul: str  # the matmul expression as written


class FileSummary(BaseModel):
    """Everything the linker and the checks need from one file, path-free."""

    # a cached summary of another shape (older scanner) must fail, not half-load
    model_config = ConfigDict(extra="forbid")

    error: str | None = None
    error_line: int | None = None
    # built from the ast call graph only (triage found nothing for the full pass to look at)
    light: bool = False
    frameworks: list[str] = Field(default_factory=list)  # "torch", "mindspore", ...
    imports: dict[str, ImportRef] = Field(default_factory=dict)
    star_imports: list[ImportRef] = Field(default_factory=list)
    classes: list[str] = Field(default_factory=list)
    # class -> its bases as written (`DistributedTrainer`, `trainer.Trainer`)
    bases: dict[str, list[str]] = Field(default_factory=dict)
    # "Class.attr" -> the class of the instance assigned to self.attr (`self.fabric = L.Fabric()`)
    attr_types: dict[str, str] = Field(default_factory=dict)
    module: FunctionSummary | None = None  # top-level statements
    main: FunctionSummary | None = None  # the `if __name__ == "__main__":` block
    functions: dict[str, FunctionSummary] = Field(default_factory=dict)
    dropouts: list[DropoutSite] = Field(default_factory=list)
    decays: list[DecaySite] = Field(default_factory=list)
    backwards: list[BackwardSite] = Field(default_factory=list)
    # qualnames of the custom backward functions (their helpers are checked when linking)
    backward_fns: list[str] = Field(default_factory=list)


# -- linked results ----------------------------------------------------------------------


class ReachedEffect(BaseModel):
    """An effect as reached from an entry point, with its seed value resolved."""

    kind: EffectKind
    api: str
    loc: Loc
    seed_value: int | None = None  # a literal seed after binding arguments
    seed_text: str = ""  # how the seed is written when not a literal
    # what is added to the base seed (seed_value), as written: "fabric.global_rank"
    seed_offset: str = ""
    seed_from_config: bool = False
    enabled: bool | None = True
    config_field: str | None = None
    needs_nonzero_seed: bool = False
    conditional: bool = False
    condition: str = ""
    note: str = ""
    # where the literal seed was written, when a caller passed it in (seed_all(42))
    seed_loc: Loc | None = None
    # the calls that led here, outermost first ("seed_all() at train.py:40")
    via: list[str] = Field(default_factory=list)


class EntryReport(BaseModel):
    path: str
    side: Side | None = None
    anchor: Loc  # the `if __name__ == "__main__":` line, or line 1
    has_main: bool = False
    # reaches an update: an optimizer step, a hand-written one, a framework training call
    trains: bool = False
    effects: list[ReachedEffect] = Field(default_factory=list)
    followed: int = 0  # function bodies followed
    files_reached: list[str] = Field(default_factory=list)
    unresolved: list[str] = Field(default_factory=list)
    # modules the entry point calls into that were not among the scanned files
    unscanned: list[str] = Field(default_factory=list)
    # calls the walk stopped at, with the reason ("depth limit of 12 calls reached at ...")
    not_followed: list[str] = Field(default_factory=list)
    # the command of a CLI dispatcher this entry runs (`python -m litgpt pretrain`)
    command: str = ""

    def of(self, *kinds: str) -> list[ReachedEffect]:
        return [e for e in self.effects if e.kind in kinds]


class SourceDropout(BaseModel):
    path: str
    side: Side | None = None
    site: DropoutSite


class SourceDecay(BaseModel):
    path: str
    side: Side | None = None
    site: DecaySite
    # where the policy was read, when it was resolved through another function
    policy_path: str | None = None


class SourceBackward(BaseModel):
    path: str
    side: Side | None = None
    site: BackwardSite


class ScanStats(BaseModel):
    files: int = 0
    parsed: int = 0  # parsed this run (cache misses)
    full: int = 0  # of those, given the full pass (the rest: ast call graph only)
    cached: int = 0  # summaries read from the cache
    failed: int = 0
    workers: int = 1
    seconds: float = 0.0
    parsed_paths: list[str] = Field(default_factory=list)


class ScanResult(BaseModel):
    files: list[str] = Field(default_factory=list)
    errors: list[InputProblem] = Field(default_factory=list)
    entries: list[EntryReport] = Field(default_factory=list)
    dropouts: list[SourceDropout] = Field(default_factory=list)
    decays: list[SourceDecay] = Field(default_factory=list)
    backwards: list[SourceBackward] = Field(default_factory=list)
    # side of each scanned file (None: imports neither framework)
    sides: dict[str, Side | None] = Field(default_factory=dict)
    # with no entry point: which criterion no module met, in words
    no_entry: str = ""
    stats: ScanStats = Field(default_factory=ScanStats)

    def entry(self, path_suffix: str) -> EntryReport | None:
        for e in self.entries:
            if e.path.replace("\\", "/").endswith(path_suffix):
                return e
        return None


FunctionSummary.model_rebuild()
CallSite.model_rebuild()
