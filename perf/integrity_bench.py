"""The plagiarism check at MLE-bench's scale: 225 runs x 50 reference notebooks of ~300
lines each (synthetic but realistic Python, seeded), compared as Dolos does.

    python perf/integrity_bench.py [--runs 225] [--references 50] [--lines 300]

Prints the total seconds (fingerprinting included), the per-pair milliseconds of the
corpus comparison, the time of one ``similarity()`` call on two 300-line files, and how
many seeded copies were caught. Targets: under 60 s in total on 2 cores, one pair under
20 ms.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

_NAMES = [
    "data",
    "frame",
    "df",
    "train",
    "valid",
    "test",
    "model",
    "preds",
    "scores",
    "params",
    "feats",
    "cols",
    "target",
    "fold",
    "oof",
    "X",
    "y",
    "encoder",
    "scaler",
    "history",
    "result",
    "best",
    "grid",
    "mask",
    "values",
    "weights",
    "stats",
    "items",
    "rows",
    "out",
]
_BLOCKS = [
    """def load_{n}(path):
    {a} = pd.read_csv(path)
    {a} = {a}.drop_duplicates()
    {a}.columns = [c.strip().lower() for c in {a}.columns]
    print("{n}", {a}.shape)
    return {a}
""",
    """def add_{n}_features({a}):
    {a} = {a}.copy()
    for {b} in [{c1}, {c2}]:
        {a}[f"{{{b}}}_log"] = np.log1p({a}[{b}].clip(lower=0))
        {a}[f"{{{b}}}_rank"] = {a}[{b}].rank(pct=True)
    {a}["{n}_ratio"] = {a}[{c1}] / ({a}[{c2}] + {k})
    {a}["{n}_bucket"] = pd.qcut({a}[{c1}], q={q}, labels=False, duplicates="drop")
    return {a}
""",
    """def fit_{n}({a}, {b}, seed={k}):
    skf = StratifiedKFold(n_splits={q}, shuffle=True, random_state=seed)
    {c} = np.zeros(len({a}))
    for fold, (tr, va) in enumerate(skf.split({a}, {b})):
        clf = lgb.LGBMClassifier(n_estimators={big}, learning_rate=0.0{q}, num_leaves={k})
        clf.fit({a}.iloc[tr], {b}.iloc[tr], eval_set=[({a}.iloc[va], {b}.iloc[va])])
        {c}[va] = clf.predict_proba({a}.iloc[va])[:, 1]
        print(f"fold {{fold}}: {{roc_auc_score({b}.iloc[va], {c}[va]):.4f}}")
    return {c}
""",
    """class {N}Dataset(torch.utils.data.Dataset):
    def __init__(self, {a}, {b}=None):
        self.{a} = torch.tensor({a}.values, dtype=torch.float32)
        self.{b} = None if {b} is None else torch.tensor({b}.values)

    def __len__(self):
        return len(self.{a})

    def __getitem__(self, index):
        if self.{b} is None:
            return self.{a}[index]
        return self.{a}[index], self.{b}[index]
""",
    """def train_{n}(net, loader, epochs={q}):
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-{q}, weight_decay=0.0{k})
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    for epoch in range(epochs):
        net.train()
        total = 0.0
        for {a}, {b} in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(net({a}), {b})
            loss.backward()
            optimizer.step()
            total += loss.item() * len({a})
        scheduler.step()
        print(f"epoch {{epoch}} loss {{total / len(loader.dataset):.4f}}")
    return net
""",
    """def evaluate_{n}({a}, {b}):
    if len({a}) != len({b}):
        raise ValueError("length mismatch")
    {c} = {{}}
    {c}["rmse"] = float(np.sqrt(np.mean(({a} - {b}) ** 2)))
    {c}["mae"] = float(np.mean(np.abs({a} - {b})))
    {c}["r2"] = 1 - np.sum(({a} - {b}) ** 2) / np.sum(({a} - np.mean({a})) ** 2)
    return {c}
""",
    """def tune_{n}({a}, {b}):
    best_score, best_params = -np.inf, None
    for depth in [{q}, {k}, {big}]:
        for rate in [0.01, 0.05, 0.1]:
            {c} = xgb.XGBRegressor(max_depth=depth, learning_rate=rate, n_estimators={big})
            score = cross_val_score({c}, {a}, {b}, cv={q}, scoring="r2").mean()
            if score > best_score:
                best_score, best_params = score, (depth, rate)
    print("best", best_params, best_score)
    return best_params
""",
    """def clean_{n}_text(text):
    text = text.lower()
    text = re.sub(r"http\\S+", " ", text)
    text = re.sub(r"[^a-z0-9 ]", " ", text)
    words = [w for w in text.split() if w not in STOP and len(w) > {q}]
    return " ".join(words)
""",
    """def plot_{n}({a}, column):
    fig, axes = plt.subplots(1, {q}, figsize=({k}, 4))
    for axis, part in zip(axes, np.array_split({a}.sort_values(column), {q})):
        axis.hist(part[column], bins={big})
        axis.set_title(f"{{column}} {{part[column].mean():.2f}}")
    fig.tight_layout()
    fig.savefig("{n}.png")
""",
    """def merge_{n}({a}, {b}, key="id"):
    {c} = {a}.merge({b}.groupby(key).agg(["mean", "std", "max"]), on=key, how="left")
    {c}.columns = ["_".join(map(str, col)).strip("_") for col in {c}.columns]
    missing = {c}.isna().mean()
    {c} = {c}.loc[:, missing < 0.{q}]
    return {c}.fillna(-{k})
""",
]
_HEADER = """import re
import numpy as np
import pandas as pd
import lightgbm as lgb
import xgboost as xgb
import torch
import torch.nn.functional as F
import matplotlib.pyplot as plt
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, cross_val_score

STOP = {"the", "a", "of", "and"}
"""


_STATEMENTS = [
    "{a} = {b}.{m}({c})",
    "print({a}, {b})",
    "{a} += {k}",
    "{a} = [v for v in {b} if v]",
    "assert {a} is not None",
    '{a} = {{"{b}": {k}, "{c}": [{k}, {q}]}}',
    "{a}, {b} = {b}, {a}",
    "{a} = {b}[{k}:{q}]",
    "{a} = np.{m}({b}, axis={k})",
    "{a} = ({b} - {b}.mean()) / ({b}.std() + 1e-{k})",
    "if {a} is None:\n{i}    {a} = {b}",
    "for v in range({k}):\n{i}    {a}.append(v * {q})",
    "{a} = {b} if {c} else {k}",
    "del {a}",
    "{a}.{m}(inplace=True)",
    "with open('{b}.txt') as handle:\n{i}    {a} = handle.read()",
    "{a} = lambda v: v ** {k}",
    "{a} = sum({b}) / max(len({b}), 1)",
]
_METHODS = ["mean", "fillna", "dropna", "reset_index", "sort_values", "astype", "clip", "abs"]


def _statement(rng: random.Random, indent: str) -> str:
    """One of the statement shapes above, with random names, at ``indent``."""
    a, b, c = rng.sample(_NAMES, 3)
    k, q = rng.randint(1, 9), rng.randint(2, 9)
    shape = rng.choice(_STATEMENTS)
    return indent + shape.format(a=a, b=b, c=c, k=k, q=q, m=rng.choice(_METHODS), i=indent)


def _mutate(block: str, rng: random.Random) -> str:
    """Statement-level edits: drop some simple lines, insert statements of other shapes,
    so that scripts differ in structure and not only in names (Dolos ignores names)."""
    lines = block.rstrip("\n").split("\n")
    out = [lines[0]]
    for index, line in enumerate(lines[1:], 1):
        indent = line[: len(line) - len(line.lstrip())]
        following = lines[index + 1] if index + 1 < len(lines) else ""
        deeper = len(following) - len(following.lstrip()) > len(indent)
        keyword = line.lstrip().startswith(("else", "elif", "except", "return", "def ", "@"))
        if indent and not keyword and rng.random() < 0.45:
            out.append(_statement(rng, indent))
        first = lines[index - 1].rstrip().endswith(":")
        simple = not line.rstrip().endswith(":") and not deeper and not keyword and not first
        if simple and indent and rng.random() < 0.25 and index + 1 < len(lines):
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def _expression(rng: random.Random, depth: int = 0) -> str:
    """A random expression: its syntax tree shape, which is what Dolos compares, varies."""
    roll = rng.random() if depth < 3 else rng.random() * 0.3
    name = rng.choice(_NAMES)
    if roll < 0.15:
        return name
    if roll < 0.25:
        return str(rng.choice([rng.randint(0, 99), round(rng.random(), 3)]))
    if roll < 0.3:
        return repr(rng.choice(_NAMES))
    if roll < 0.45:
        args = ", ".join(_expression(rng, depth + 1) for _ in range(rng.randint(0, 3)))
        return f"{name}.{rng.choice(_METHODS)}({args})"
    if roll < 0.55:
        op = rng.choice(["+", "-", "*", "/", "//", "%", "**", "@"])
        return f"({_expression(rng, depth + 1)} {op} {_expression(rng, depth + 1)})"
    if roll < 0.62:
        return f"{name}[{_expression(rng, depth + 1)}]"
    if roll < 0.68:
        return f"{name}[{rng.randint(0, 9)}:{rng.randint(10, 99)}]"
    if roll < 0.74:
        items = ", ".join(_expression(rng, depth + 1) for _ in range(rng.randint(1, 3)))
        return f"[{items}]"
    if roll < 0.79:
        return f'{{"{name}": {_expression(rng, depth + 1)}}}'
    if roll < 0.84:
        return f"[v for v in {_expression(rng, depth + 1)} if v]"
    if roll < 0.88:
        return f"({_expression(rng, depth + 1)} if {name} else {_expression(rng, depth + 1)})"
    if roll < 0.92:
        return f"(not {_expression(rng, depth + 1)})"
    if roll < 0.96:
        return f"({_expression(rng, depth + 1)} < {_expression(rng, depth + 1)})"
    kw = rng.choice(["axis", "inplace", "how", "on", "key"])
    return f"{name}({_expression(rng, depth + 1)}, {kw}={_expression(rng, depth + 1)})"


def _random_function(name: str, rng: random.Random) -> str:
    """A function of random statements and nested loops/branches."""
    args = ", ".join(rng.sample(_NAMES, rng.randint(1, 3)))
    out = [f"def {name}({args}):"]

    def body(indent: str, depth: int) -> None:
        for _ in range(rng.randint(2, 6)):
            roll = rng.random()
            a, b, c = rng.sample(_NAMES, 3)
            if depth < 2 and roll < 0.15:
                out.append(f"{indent}for {a} in {b}:")
                body(indent + "    ", depth + 1)
            elif depth < 2 and roll < 0.25:
                out.append(f"{indent}if {a} > {rng.randint(0, 9)}:")
                body(indent + "    ", depth + 1)
            elif depth < 2 and roll < 0.3:
                out.append(f"{indent}try:")
                body(indent + "    ", depth + 1)
                out.append(f"{indent}except (KeyError, ValueError):")
                out.append(f"{indent}    {a} = None")
            elif roll < 0.45:
                out.append(_statement(rng, indent))
            elif roll < 0.85:
                target = rng.choice([a, f"{a}.{b}", f"{a}[{rng.randint(0, 9)}]", f"{a}, {b}"])
                out.append(f"{indent}{target} = {_expression(rng)}")
            else:
                out.append(f"{indent}{a}.{rng.choice(_METHODS)}({_expression(rng)})")

    body("    ", 0)
    out.append(f"    return {rng.choice(_NAMES)}")
    return "\n".join(out) + "\n"


def synthetic_script(seed: int, lines: int = 300) -> str:
    """A seeded, plausible competition script of about ``lines`` lines."""
    rng = random.Random(seed)
    parts = [_HEADER]
    count = _HEADER.count("\n")
    serial = 0
    while count < lines - 12:
        serial += 1
        a, b, c = rng.sample(_NAMES, 3)
        block = rng.choice(_BLOCKS).format(
            n=f"{rng.choice(_NAMES).lower()}{serial}",
            N=f"{rng.choice(_NAMES).title()}{serial}",
            a=a,
            b=b,
            c=c,
            c1=repr(rng.choice(_NAMES)),
            c2=repr(rng.choice(_NAMES)),
            k=rng.randint(1, 9),
            q=rng.randint(2, 9),
            big=rng.choice([100, 200, 500, 1000, 2000]),
        )
        block = _mutate(block, rng)
        if rng.random() < 0.6:
            block = _random_function(f"step_{rng.choice(_NAMES).lower()}{serial}", rng)
        parts.append(block)
        count += block.count("\n") + 2
    parts.append('if __name__ == "__main__":\n    main()\n')
    return "\n\n".join(parts)


def disguised_copy(text: str, seed: int) -> str:
    """A copy with every identifier it can safely rename renamed and comments added."""
    rng = random.Random(seed)
    for name in _NAMES:
        text = re.sub(rf"\b{name}\b", f"{name}_{rng.randint(0, 99)}", text)
    return text.replace("\n\n\ndef ", "\n\n\n# helper\ndef ")


def build_corpus(runs: int, references: int, lines: int) -> tuple[dict, dict, set]:
    refs = {f"ref{i:03d}.py": synthetic_script(10_000 + i, lines) for i in range(references)}
    subs = {}
    copied = set()
    for i in range(runs):
        if i % 15 == 0:  # one run in 15 copies a reference
            ref = f"ref{(i // 15) % references:03d}.py"
            subs[f"run{i:03d}.py"] = disguised_copy(refs[ref], i)
            copied.add((f"run{i:03d}.py", ref))
        else:
            subs[f"run{i:03d}.py"] = synthetic_script(20_000 + i, lines)
    return subs, refs, copied


def main(argv=None) -> int:
    from benchmark.integrity.winnowing import compare_corpus, similarity

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=225)
    parser.add_argument("--references", type=int, default=50)
    parser.add_argument("--lines", type=int, default=300)
    parser.add_argument("--threshold", type=float, default=0.6)
    args = parser.parse_args(argv)
    subs, refs, copied = build_corpus(args.runs, args.references, args.lines)
    started, cpu = time.perf_counter(), time.process_time()
    matches = compare_corpus(subs, refs, threshold=args.threshold)
    total, cpu = time.perf_counter() - started, time.process_time() - cpu
    pairs = len(subs) * len(refs)
    a, b = next(iter(subs.values())), next(iter(refs.values()))
    similarity(a, b, "python")
    one, one_cpu = time.perf_counter(), time.process_time()
    for _ in range(20):
        similarity(a, b, "python")
    one, one_cpu = (time.perf_counter() - one) / 20, (time.process_time() - one_cpu) / 20
    found = {(m.submission, m.reference) for m in matches}
    print(
        f"corpus: {len(subs)} runs x {len(refs)} references = {pairs} pairs, ~{args.lines} lines each"
    )
    print(
        f"total: {total:.2f} s wall, {cpu:.2f} s CPU "
        f"({total / pairs * 1000:.3f} ms per pair, fingerprinting included)"
    )
    print(
        f"one similarity() call on two files: {one * 1000:.1f} ms wall, {one_cpu * 1000:.1f} ms CPU"
    )
    print(
        f"flagged at {args.threshold}: {len(found)} pairs; seeded copies caught "
        f"{len(found & copied)}/{len(copied)}; others flagged {len(found - copied)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
