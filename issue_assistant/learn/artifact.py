"""The label model on disk: one `.npz` of numpy arrays and JSON, read without pickle, checked whole.

Loading runs no code from the file (`allow_pickle=False`). Everything read is validated before it
is trusted: the metadata against a strict model (keys, types, ranges), every array's dtype and
shape against the metadata (vocabulary size = idf length, coefficient rows = feature width, one
column per label), values finite where they must be, and a checksum of the arrays recorded at
save time. A file that fails any check raises `InvalidArtifact` naming the first problem;
`learn/store.py` logs that in one line and refits.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from issue_assistant.learn import type_prior
from issue_assistant.learn.confidence import ThresholdTable
from issue_assistant.learn.features import TOKEN
from issue_assistant.learn.linear import Featurizer, LinearHead, TextPart

# 3: tables with folds and curves; 4: the numpy fit, checked; 5: the source and the vote's rows;
# 6: the type prior's kinds and weight; 7: the cue blocks (`learn/cues.py`); 8: the block of
# form terms (`learn/form_terms.py`); 9: the title's blocks at 0.6 (`learn/features.py`); 10: a
# single-label group's curve per label (`learn/confidence.LABEL_CURVE_MIN`); 11: the block of
# the body's HTML comments (`learn/form_terms.comment_terms`)
FORMAT = 11
EMBEDDING_DIM = 384


class InvalidArtifact(ValueError):
    """The file is not a label model this version wrote (or it was changed since)."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))  # one log line


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class PartMeta(_Strict):
    column: Literal[0, 1, 2]
    analyzer: Literal["word", "char_wb", "cues", "form", "comments"]
    ngram: tuple[int, int]
    token_pattern: Literal[TOKEN]  # type: ignore[valid-type]
    lowercase: bool
    sublinear: bool
    weight: float = Field(gt=0, allow_inf_nan=False)
    terms: int = Field(ge=1)

    @field_validator("ngram")
    @classmethod
    def _ngram(cls, v: tuple[int, int]) -> tuple[int, int]:
        if not 1 <= v[0] <= v[1] <= 10:
            raise ValueError(f"ngram {v} is not 1 <= low <= high <= 10")
        return v


class GroupMeta(_Strict):
    group: Literal["type", "area", "topic", "priority"]
    mode: Literal["learned", "vote"]
    reason: str
    classes: list[str]
    issues: int = Field(ge=0)
    kind: Literal["binary", "softmax", "ovr"] | None
    dense: bool = False
    c: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    table: dict[str, Any] | None = None
    source: Literal["model", "blend", "vote"] = "model"
    sources: dict[str, float] = Field(default_factory=dict)
    prior_kinds: dict[str, Literal["bug", "feature", "question", "docs"]] = Field(
        default_factory=dict
    )
    prior_weight: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    prior: str = ""  # which shipped prior (`type_prior.TypePrior.key`) the weight was set for


class Meta(_Strict):
    format: int
    labels_key: str
    cutoff: str
    fingerprint: str = Field(pattern=r"^[0-9a-f]{16}$")
    issues: int = Field(ge=0)
    fit_seconds: float = Field(ge=0, allow_inf_nan=False)
    indexed: int = Field(ge=0)
    featurizer: list[PartMeta] | None
    groups: list[GroupMeta]
    # Per group proposing from the vote, each kept training row's label (`learn/neighbours.py`;
    # the rows are the arrays `neighbours_*`).
    neighbours: dict[str, list[str | None]] | None = None
    checksum: str


def _json(value: Any) -> np.ndarray:
    return np.frombuffer(json.dumps(value).encode(), dtype=np.uint8)


def _unjson(array: np.ndarray, what: str) -> Any:
    if array.dtype != np.uint8 or array.ndim != 1:
        raise InvalidArtifact(f"{what}: not JSON bytes")
    try:
        return json.loads(array.tobytes().decode())
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidArtifact(f"{what}: not JSON ({exc})") from None


def checksum(arrays: dict[str, np.ndarray]) -> str:
    """sha256 over every array but `meta`: names, dtypes, shapes and bytes."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        if name == "meta":
            continue
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}|{a.dtype.str}|{a.shape}\n".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _head_arrays(arrays: dict[str, np.ndarray], prefix: str, head: LinearHead) -> None:
    arrays[f"{prefix}_coef"] = np.asarray(head.coef, dtype=np.float32)
    arrays[f"{prefix}_intercept"] = np.asarray(head.intercept, dtype=np.float64)


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
        arrays[f"part{i}_idf"] = np.asarray(p.idf, dtype=np.float64)
        parts.append(
            {
                "column": p.column,
                "analyzer": p.analyzer,
                "ngram": list(p.ngram),
                "token_pattern": p.token_pattern,
                "lowercase": p.lowercase,
                "sublinear": p.sublinear,
                "weight": p.weight,
                "terms": len(terms),
            }
        )
    groups = []
    for name, gm in model.groups.items():
        if gm.head is not None:
            _head_arrays(arrays, f"group_{name}", gm.head)
        if gm.dense is not None:
            _head_arrays(arrays, f"group_{name}_dense", gm.dense)
            arrays[f"group_{name}_dense_mean"] = np.asarray(gm.dense_mean, dtype=np.float64)
        groups.append(
            {
                "group": name,
                "mode": gm.mode,
                "reason": gm.reason,
                "classes": gm.classes,
                "issues": gm.issues,
                "kind": gm.head.kind if gm.head is not None else None,
                "dense": gm.dense is not None,
                "c": gm.c,
                "table": gm.table.model_dump(mode="json") if gm.table is not None else None,
                "source": gm.source,
                "sources": gm.sources,
                "prior_kinds": gm.prior_kinds,
                "prior_weight": gm.prior_weight,
                "prior": type_prior.load_prior().key if gm.prior_weight > 0 else "",
            }
        )
    nb = model.neighbours
    if nb is not None:
        arrays["neighbours_indptr"] = np.asarray(nb.matrix.indptr, dtype=np.int64)
        arrays["neighbours_indices"] = np.asarray(nb.matrix.indices, dtype=np.int32)
        arrays["neighbours_data"] = np.asarray(nb.matrix.data, dtype=np.float32)
    arrays["meta"] = _json(
        {
            "format": FORMAT,
            "labels_key": labels_key,
            "cutoff": model.cutoff.isoformat(),
            "fingerprint": model.fingerprint,
            "issues": model.issues,
            "fit_seconds": model.fit_seconds,
            "indexed": model.indexed,
            "featurizer": parts if feats is not None else None,
            "groups": groups,
            "neighbours": nb.gold if nb is not None else None,
            "checksum": checksum(arrays),
        }
    )
    return arrays


def write_to(model: Any, labels_key: str, fh: BinaryIO) -> None:
    """Write the model to an open binary file (the caller renames it into place)."""
    np.savez(fh, **to_arrays(model, labels_key))


def _array(data: dict[str, np.ndarray], name: str, dtype: type, shape: tuple) -> np.ndarray:
    if name not in data:
        raise InvalidArtifact(f"array {name} is missing")
    a = data[name]
    if a.dtype != np.dtype(dtype) or a.shape != shape:
        raise InvalidArtifact(f"{name}: {a.dtype} {a.shape}, expected {np.dtype(dtype)} {shape}")
    return a


def _head(data: dict, prefix: str, kind: str, width: int, outputs: int) -> LinearHead:
    coef = _array(data, f"{prefix}_coef", np.float32, (width, outputs))
    intercept = _array(data, f"{prefix}_intercept", np.float64, (outputs,))
    if not np.all(np.isfinite(coef)):
        raise InvalidArtifact(f"{prefix}_coef: not all finite")
    if np.any(np.isnan(intercept)) or (kind != "ovr" and not np.all(np.isfinite(intercept))):
        raise InvalidArtifact(f"{prefix}_intercept: not finite")
    return LinearHead(kind, coef, intercept)


def _featurizer(data: dict, parts: list[PartMeta]) -> Featurizer:
    out = []
    for i, p in enumerate(parts):
        name = f"part{i}_terms"
        if name not in data:
            raise InvalidArtifact(f"array {name} is missing")
        terms = _unjson(data[name], name)
        if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
            raise InvalidArtifact(f"part{i}_terms: not a list of terms")
        if len(terms) != p.terms or len(set(terms)) != len(terms):
            raise InvalidArtifact(f"part{i}_terms: {len(terms)} terms, expected {p.terms} distinct")
        idf = _array(data, f"part{i}_idf", np.float64, (p.terms,))
        if not np.all(np.isfinite(idf)) or np.any(idf < 1.0):
            raise InvalidArtifact(f"part{i}_idf: values outside [1, inf)")
        out.append(
            TextPart(
                column=p.column,
                analyzer=p.analyzer,
                ngram=p.ngram,
                token_pattern=p.token_pattern,
                lowercase=p.lowercase,
                sublinear=p.sublinear,
                weight=p.weight,
                vocabulary=dict(zip(terms, range(len(terms)), strict=True)),
                idf=idf,
            )
        )
    return Featurizer(out)


def _group(data: dict, g: GroupMeta, width: int | None) -> Any:
    from issue_assistant.learn.model import GroupModel

    if len(set(g.classes)) != len(g.classes):
        raise InvalidArtifact(f"group {g.group}: repeated classes")
    head = dense = mean = None
    if g.mode == "learned":
        if g.kind is None or width is None or len(g.classes) < (2 if g.kind != "ovr" else 1):
            raise InvalidArtifact(f"group {g.group}: learned without a head or its classes")
        if g.kind == "binary" and len(g.classes) != 2:
            raise InvalidArtifact(f"group {g.group}: binary with {len(g.classes)} classes")
        outputs = 1 if g.kind == "binary" else len(g.classes)
        head = _head(data, f"group_{g.group}", g.kind, width, outputs)
        if g.dense:
            dense = _head(data, f"group_{g.group}_dense", g.kind, EMBEDDING_DIM, outputs)
            mean = _array(data, f"group_{g.group}_dense_mean", np.float64, (EMBEDDING_DIM,))
            if not np.all(np.isfinite(mean)):
                raise InvalidArtifact(f"group_{g.group}_dense_mean: not all finite")
    elif g.kind is not None or g.dense:
        raise InvalidArtifact(f"group {g.group}: a head without a learned mode")
    try:
        table = ThresholdTable.model_validate(g.table) if g.table is not None else None
    except ValidationError as exc:
        raise InvalidArtifact(f"group {g.group}: threshold table: {_first(exc)}") from None
    if g.source != "model" and (g.mode != "learned" or g.group not in ("type", "priority")):
        raise InvalidArtifact(f"group {g.group}: source {g.source} without a learned single label")
    learned_type = g.group == "type" and g.mode == "learned"
    if g.prior_weight > 0 and not (learned_type and set(g.prior_kinds) <= set(g.classes)):
        raise InvalidArtifact(f"group {g.group}: a type prior without its learned labels")
    return GroupModel(
        g.group,
        g.mode,
        g.reason,
        g.classes,
        head,
        g.issues,
        table,
        dense,
        g.c,
        mean,
        g.source,
        dict(g.sources),
        dict(g.prior_kinds),
        g.prior_weight,
    )


def _neighbours(data: dict, meta: Meta, width: int | None) -> Any:
    """The vote's training rows, checked against the groups that propose from them."""
    from issue_assistant.learn.neighbours import Neighbours
    from issue_assistant.learn.sparse import Csr

    voting = {g.group: g for g in meta.groups if g.source != "model"}
    if meta.neighbours is None:
        if voting:
            raise InvalidArtifact(f"group {min(voting)}: proposes from the vote without its rows")
        return None
    if set(meta.neighbours) != set(voting) or width is None:
        raise InvalidArtifact("neighbours: not the groups that propose from the vote")
    lengths = {len(v) for v in meta.neighbours.values()}
    if len(lengths) != 1:
        raise InvalidArtifact("neighbours: groups with different numbers of rows")
    rows = lengths.pop()
    for name, gold in meta.neighbours.items():
        if any(y is not None and y not in voting[name].classes for y in gold):
            raise InvalidArtifact(f"neighbours: a {name} label the group does not learn")
    indptr = _array(data, "neighbours_indptr", np.int64, (rows + 1,))
    nnz = int(indptr[-1]) if rows >= 0 else 0
    if indptr[0] != 0 or np.any(np.diff(indptr) < 0):
        raise InvalidArtifact("neighbours_indptr: not rising from 0")
    indices = _array(data, "neighbours_indices", np.int32, (nnz,))
    values = _array(data, "neighbours_data", np.float32, (nnz,))
    if nnz and (indices.min() < 0 or indices.max() >= width):
        raise InvalidArtifact("neighbours_indices: a column outside the features")
    if not np.all(np.isfinite(values)):
        raise InvalidArtifact("neighbours_data: not all finite")
    return Neighbours(Csr(indptr, indices, values, width), dict(meta.neighbours))


def _first(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(x) for x in err["loc"])
    return f"{where}: {err['msg']}" if where else err["msg"]


def same_prior(meta: Meta) -> bool:
    """Whether every group that blends the type prior was fit beside the one shipped now."""
    return all(g.prior == type_prior.load_prior().key for g in meta.groups if g.prior_weight > 0)


def read(path: Path) -> tuple[dict[str, Any], Any]:
    """(metadata, LabelModel) from `path`; (metadata, None) for a model another version of the
    tool wrote: another format, or fit beside another shipped type prior (`same_prior`).

    Raises `InvalidArtifact` (a ValueError) for anything else that is not as written.
    """
    from issue_assistant.learn.model import LabelModel

    try:
        npz = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise InvalidArtifact(f"not a numpy archive ({exc})") from None
    try:
        with npz:
            data = {name: npz[name] for name in npz.files}
    except Exception as exc:  # noqa: BLE001 - zip and format errors of every kind
        raise InvalidArtifact(f"unreadable array ({type(exc).__name__}: {exc})") from None
    if "meta" not in data:
        raise InvalidArtifact("no metadata")
    raw = _unjson(data["meta"], "meta")
    if not isinstance(raw, dict):
        raise InvalidArtifact("metadata is not an object")
    if raw.get("format") != FORMAT:
        return raw, None
    try:
        meta = Meta.model_validate_json(data["meta"].tobytes())
        cutoff = datetime.fromisoformat(meta.cutoff)
    except ValidationError as exc:
        raise InvalidArtifact(f"metadata: {_first(exc)}") from None
    except ValueError as exc:
        raise InvalidArtifact(f"metadata: cutoff: {exc}") from None
    if cutoff.tzinfo is None:
        raise InvalidArtifact("metadata: cutoff without a timezone")
    if checksum(data) != meta.checksum:
        raise InvalidArtifact("the arrays do not match their checksum (changed since written)")
    if not same_prior(meta):
        return raw, None
    feats = _featurizer(data, meta.featurizer) if meta.featurizer is not None else None
    width = sum(len(p.idf) for p in feats.parts) if feats is not None else None
    names = [g.group for g in meta.groups]
    if len(set(names)) != len(names):
        raise InvalidArtifact("metadata: a group twice")
    groups = {g.group: _group(data, g, width) for g in meta.groups}
    neighbours = _neighbours(data, meta, width)
    model = LabelModel(
        cutoff=cutoff,
        fingerprint=meta.fingerprint,
        issues=meta.issues,
        groups=groups,
        featurizer=feats,
        fit_seconds=meta.fit_seconds,
        indexed=meta.indexed,
        neighbours=neighbours,
    )
    return raw, model
