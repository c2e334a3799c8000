"""The runtime probe's evidence in each output format, and its PNG plot."""

from __future__ import annotations

from typing import Any


def _g(x: Any) -> str:
    return f"{x:.3g}" if isinstance(x, float) else str(x)


def _ran(runs: list[dict[str, str]]) -> str:
    """ "torch cpu bfloat16 against mindspore cpu float32" for a measurement's runs."""
    return " against ".join(f"{r['framework']} {r['device']} {r['dtype']}" for r in runs)


def text_section(p: dict[str, Any]) -> str:
    """The probe's block of the text report (``p``: the probe's JSON form)."""
    lines = ["", "Runtime probe"]
    dev = ", ".join(f"{k} {v}" for k, v in p["device"].items())
    lines.append(f"  device: {dev}; {p['steps']} steps; {p['seconds']:.0f} s")
    ran = {m["measure"]: _ran(m["runs"]) for m in p.get("measurements", [])}
    f = p["floor"]
    lines.append(
        "  floor (same semantics twice): first loss "
        f"{_g(f['first_loss_abs'])}, mean loss {_g(f['mean_loss_abs'])}, global norm rel "
        f"{_g(f['global_norm_rel'])}, local norm rel {_g(f['local_norm_rel'])}, update rel "
        f"{_g(f['update_rel'])} ({ran.get('floor', '')})"
    )
    g = p["gap"]
    lines.append(
        f"  gap as configured: first loss {_g(g['first_loss_abs'])}, mean loss "
        f"{_g(g['mean_loss_abs'])}, global norm rel {_g(g['global_norm_rel'])}, local norm rel "
        f"{_g(g['local_norm_rel'])} (worst {g['worst_weight']}), update rel "
        f"{_g(g.get('update_rel', 0.0))} (worst {g.get('update_worst_weight', '-')}) "
        f"({ran.get('gap', '')})"
    )
    st = p["standard"]
    lines.append(
        f"  migration standard: first loss {st['first_loss']}, mean loss {st['mean_loss']}, "
        f"global norm {st['global_norm']}"
    )
    lines.append("  confirmations (effect of aligning one knob, in one framework):")
    for c in p["confirmations"]:
        if c["verdict"] == "not probed":
            lines.append(f"    {c['rule']:7s} {c['row']:34s} not probed: {c['reason']}")
        else:
            knobs = ", ".join(f"{k} {v[0]}->{v[1]}" for k, v in c["knobs"].items())
            lines.append(
                f"    {c['rule']:7s} {c['row']:34s} {c['verdict']}: {c['reason']} ({knobs})"
            )
    r = p["residual"]
    lines.append(
        f"  residual after aligning the confirmed knobs: mean loss {_g(r['mean_loss_abs'])} "
        f"({_g(r['floor_multiple'])}x floor): {r['verdict']}"
    )
    x = p.get("cross_float32") or {}
    if x:
        lines.append(
            f"  cross-framework in float32: {x['verdict']} "
            f"({ran.get('cross_float32 mindformers spec', '')}; {x['why']})"
        )
    for note in [*p["notes"], p["lr"]["note"]]:
        lines.append(f"  note: {note}")
    for gp in p["not_probed"]:
        lines.append(f"  not expressible ({gp['side']}, {gp['field']}): {gp['reason']}")
    return "\n".join(lines) + "\n"


def concise_lines(p: dict[str, Any]) -> list[str]:
    """One line per probe verdict, for ``--output-format concise``."""
    st = p["standard"]
    out = [
        f"probe: standard first loss {st['first_loss']}, mean loss {st['mean_loss']}, "
        f"global norm {st['global_norm']}; residual {p['residual']['verdict']}"
    ]
    for c in p["confirmations"]:
        out.append(f"probe: {c['rule']} {c['verdict']}: {c['reason']}")
    return out


def plot(result: Any, path: str, names: tuple[str, str]) -> None:
    """Loss curves of both sides, each confirmed knob's curve, and step-1 local norms."""
    import os

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(17, 5))
    steps = range(1, result.steps + 1)
    c = result.curves
    ax1.plot(steps, c["mindformers"], "o-", label="MindFormers side")
    ax1.plot(steps, c["megatron"], "s--", label="Megatron side")
    for k, v in c.items():
        if k.startswith("aligned@cfg "):  # a learning-rate knob, judged at the configured lr
            ax1.plot(steps, v, label="aligned " + k.removeprefix("aligned@cfg "), alpha=0.8)
    ax1.set_title("loss, configured lr")
    ax1.set_xlabel("step")
    ax1.legend(fontsize=8)
    ax2.plot(steps, c["mindformers@probe-lr"], "k-", lw=2, label="MindFormers spec")
    ax2.plot(steps, c["megatron@probe-lr"], "k--", lw=2, label="Megatron spec")
    for k, v in c.items():
        if k.startswith("aligned "):
            ax2.plot(steps, v, label=k, alpha=0.8)
    ax2.set_title(f"loss at probe lr {result.lr['probe']:g}, one knob aligned")
    ax2.set_xlabel("step")
    ax2.legend(fontsize=7)
    ln = result.local_norms
    names_w = list(ln.get("megatron", {}))
    x = range(len(names_w))
    ax3.bar(
        [i - 0.2 for i in x],
        [ln["mindformers"].get(n, 0) for n in names_w],
        0.4,
        label="MindFormers side",
    )
    ax3.bar([i + 0.2 for i in x], [ln["megatron"][n] for n in names_w], 0.4, label="Megatron side")
    ax3.set_xticks(list(x))
    ax3.set_xticklabels(names_w, rotation=90, fontsize=6)
    ax3.set_yscale("log")
    ax3.set_title("step-1 gradient norm per weight")
    ax3.legend(fontsize=8)
    fig.suptitle(f"cfglint probe: {os.path.basename(names[0])} vs {os.path.basename(names[1])}")
    fig.tight_layout()
    import io

    from cfglint.load.outputs import write_atomic

    buf = io.BytesIO()
    fig.savefig(buf, format=path.rpartition(".")[2].lower() if "." in path else "png", dpi=90)
    plt.close(fig)
    write_atomic(path, buf.getvalue(), what="plot")
