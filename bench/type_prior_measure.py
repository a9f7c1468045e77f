"""The held-out measure of `bench/fit_type_prior.py --measure` (see there): the type model
without the prior and with it at the shipped weight, the top label and what is proposed at the
type floors of `FLOORS`."""

from __future__ import annotations

import time

import numpy as np

from bench.fit_type_prior import DATA, POETRY, labelled
from bench.fit_type_prior import fit as fit_prior
from bench.section_labels import RULE, _f1, _settings, _type_of
from issue_assistant.config.labels import load_labels
from issue_assistant.learn import type_prior
from issue_assistant.learn.model import fit
from issue_assistant.learn.tiers import TierRule, choose

# (WEIGHT, HALF_AT): the prior's weight with no history and where it is halved; 0: no prior
WEIGHTS = ((0.0, type_prior.HALF_AT), (type_prior.WEIGHT, type_prior.HALF_AT))
FLOORS = (0.6, 0.5)
TWO = ("bug", "enhancement", "kind/bug", "kind/feature")


def settings(name: str):  # noqa: ANN201
    rows, types = labelled(name)
    typed = [r for r in rows if _type_of(r, types)]
    if name == "hf-datasets":
        return types, _settings(rows, typed, False)
    out = []
    for k in POETRY:
        after = [r for r in typed if r.created_at > rows[k - 1].created_at]
        out.append((f"oldest {k} labelled issues", rows[:k], after))
    return types, out


def held_out():  # noqa: ANN201
    """Per snapshot and setting, with the type prior fit on the other snapshot alone loaded:
    (snapshot, labels, setting, training rows, scored rows, their types, the types present, the
    two of bug/enhancement (kind/bug, kind/feature) present). The shipped prior is back after."""
    shipped = type_prior.load_prior
    try:
        for name in DATA:
            prior = fit_prior([m for m in DATA if m != name])
            type_prior.load_prior = lambda path=None, prior=prior: prior  # type: ignore[assignment]
            labels = load_labels(DATA[name][1])
            types, found = settings(name)
            for setting, train, test in found:
                gold = [_type_of(r, types) for r in test]
                present = sorted(set(gold))  # type: ignore[arg-type]
                two = [n for n in TWO if n in present]
                yield name, labels, setting, train, test, gold, present, two
    finally:
        type_prior.load_prior = shipped


def type_probabilities(model, rows, vectors=None) -> list[dict[str, float]]:  # noqa: ANN001
    """Each row's type probabilities from a fitted `LabelModel` (`vectors`: issue number ->
    sentence embedding, for a model fit with them)."""
    dense = np.vstack([vectors(r.number) for r in rows]) if vectors and rows else None
    return [p.get("type", {}) for p in model.probabilities_many([r.doc for r in rows], dense)]


def proposed(gm, probs: list[dict[str, float]], rule: TierRule = RULE) -> list[str | None]:  # noqa: ANN001
    """What the engine proposes for each of `probs` under `rule` (None: it abstains)."""
    out = []
    for p in probs:
        c = choose(gm.table, p, single=True, limit=1, rule=rule)
        out.append(c.chosen[0][0] if c.chosen else None)
    return out


def measure(priors: dict[str, type_prior.TypePrior]) -> None:
    for name, prior in priors.items():
        type_prior.load_prior = lambda path=None, prior=prior: prior  # type: ignore[assignment]
        labels = load_labels(DATA[name][1])
        types, found = settings(name)
        base = dict(zip(prior.kinds, prior.base.round(3).tolist(), strict=True))
        print(f"## {name}: prior fit on {prior.about['data']} {prior.about['issues']} {base}")
        for setting, train, test in found:
            gold = [_type_of(r, types) for r in test]
            present = sorted(set(gold))  # type: ignore[arg-type]
            two = [n for n in ("bug", "enhancement", "kind/bug", "kind/feature") if n in present]
            for w0, half in WEIGHTS:
                type_prior.WEIGHT, type_prior.HALF_AT = w0, half
                start = time.perf_counter()
                model = fit(train, labels, test[0].created_at)
                took = time.perf_counter() - start
                gm = model.groups["type"]
                probs = type_probabilities(model, test)
                top = [max(p, key=p.get) if p else None for p in probs]
                cells = []
                for floor in FLOORS:
                    rule = TierRule(RULE.floor, RULE.target, single_floor=floor)
                    at = proposed(gm, probs, rule)
                    cover = sum(a is not None for a in at) / len(at)
                    cells.append(
                        f"floor {floor}: all {_f1(gold, at, present):.3f} "
                        f"two {_f1(gold, at, two):.3f} cov {cover:.2f}"
                    )
                print(
                    f"{name} | {setting} | scored {len(test)} | w0 {w0} half {half} "
                    f"(w {gm.prior_weight:.2f}, source {gm.source}) | top all "
                    f"{_f1(gold, top, present):.3f} two {_f1(gold, top, two):.3f} | proposed "
                    f"{'; '.join(cells)} | "
                    f"{took:.1f} s",
                    flush=True,
                )
