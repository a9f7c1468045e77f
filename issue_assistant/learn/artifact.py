"""The label model on disk: one `.npz` of numpy arrays and JSON, read without pickle.

Loading runs no code from the file (`allow_pickle=False`) and imports no scikit-learn: the
vocabularies and metadata are JSON (as bytes), the idf weights and coefficients arrays.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from issue_assistant.learn.calibration import ThresholdTable
from issue_assistant.learn.linear import Featurizer, LinearHead, TextPart

FORMAT = 3  # 3: tables carry their folds and curves (learn/calibration.py)


def _json(value: Any) -> np.ndarray:
    return np.frombuffer(json.dumps(value).encode(), dtype=np.uint8)


def _unjson(array: np.ndarray) -> Any:
    return json.loads(array.tobytes().decode())


def to_arrays(model: Any, labels_key: str) -> dict[str, np.ndarray]:
    """The arrays `np.savez` writes for a `LabelModel`."""
    arrays: dict[str, np.ndarray] = {}
    parts = []
    feats: Featurizer | None = model.featurizer
    for i, p in enumerate(feats.parts if feats is not None else []):
        terms = [""] * len(p.vocabulary)
        for term, col in p.vocabulary.items():
            terms[col] = term
        arrays[f"part{i}_terms"] = _json(terms)
        arrays[f"part{i}_idf"] = p.idf
        parts.append(
            {
                "column": p.column,
                "analyzer": p.analyzer,
                "ngram": list(p.ngram),
                "token_pattern": p.token_pattern,
                "lowercase": p.lowercase,
                "sublinear": p.sublinear,
                "weight": p.weight,
            }
        )
    groups = []
    for name, gm in model.groups.items():
        if gm.head is not None:
            arrays[f"group_{name}_coef"] = gm.head.coef
            arrays[f"group_{name}_intercept"] = gm.head.intercept
        groups.append(
            {
                "group": name,
                "mode": gm.mode,
                "reason": gm.reason,
                "classes": gm.classes,
                "issues": gm.issues,
                "kind": gm.head.kind if gm.head is not None else None,
                "table": gm.table.model_dump(mode="json") if gm.table is not None else None,
            }
        )
    arrays["meta"] = _json(
        {
            "format": FORMAT,
            "labels_key": labels_key,
            "cutoff": model.cutoff.isoformat(),
            "fingerprint": model.fingerprint,
            "issues": model.issues,
            "sklearn_version": model.sklearn_version,
            "fit_seconds": model.fit_seconds,
            "indexed": model.indexed,
            "featurizer": parts if feats is not None else None,
            "groups": groups,
        }
    )
    return arrays


def write_to(model: Any, labels_key: str, fh: BinaryIO) -> None:
    """Write the model to an open binary file (the caller renames it into place)."""
    np.savez(fh, **to_arrays(model, labels_key))


def read(path: Path) -> tuple[dict[str, Any], Any]:
    """(metadata, LabelModel) from `path`; a malformed file raises ValueError or KeyError."""
    from issue_assistant.learn.model import GroupModel, LabelModel

    with np.load(path, allow_pickle=False) as data:
        meta = _unjson(data["meta"])
        if meta.get("format") != FORMAT:
            return meta, None
        feats = None
        if meta["featurizer"] is not None:
            parts = []
            for i, p in enumerate(meta["featurizer"]):
                terms = _unjson(data[f"part{i}_terms"])
                parts.append(
                    TextPart(
                        column=p["column"],
                        analyzer=p["analyzer"],
                        ngram=(p["ngram"][0], p["ngram"][1]),
                        token_pattern=p["token_pattern"],
                        lowercase=p["lowercase"],
                        sublinear=p["sublinear"],
                        weight=p["weight"],
                        vocabulary=dict(zip(terms, range(len(terms)), strict=True)),
                        idf=data[f"part{i}_idf"],
                    )
                )
            feats = Featurizer(parts)
        groups = {}
        for g in meta["groups"]:
            head = None
            if g["kind"] is not None:
                head = LinearHead(
                    g["kind"],
                    data[f"group_{g['group']}_coef"],
                    data[f"group_{g['group']}_intercept"],
                )
            table = ThresholdTable.model_validate(g["table"]) if g["table"] is not None else None
            groups[g["group"]] = GroupModel(
                g["group"], g["mode"], g["reason"], g["classes"], head, g["issues"], table
            )
    model = LabelModel(
        cutoff=datetime.fromisoformat(meta["cutoff"]),
        fingerprint=meta["fingerprint"],
        issues=meta["issues"],
        groups=groups,
        featurizer=feats,
        sklearn_version=meta["sklearn_version"],
        fit_seconds=meta["fit_seconds"],
        indexed=meta["indexed"],
    )
    return meta, model
