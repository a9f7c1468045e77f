"""Features: TF-IDF of the title (word 1-2-grams and char_wb 3-5-grams) and of the prose."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.feature_extraction.text import TfidfVectorizer

# Measured on hf-datasets (bench/section_labels.py): the title at weight 1 beside the body did
# better than 1.5, 2 or 3. Char n-grams of the body added about 0.015 macro F1 at five times the
# fit time (fit per evaluate bucket and per cross-validation fold), so the body has words only.
TITLE_WEIGHT = 1.0


def featurizer() -> ColumnTransformer:
    """Column 0 is the title, column 1 the prose (see `learn.text.fields`)."""
    word = {"ngram_range": (1, 2), "sublinear_tf": True, "token_pattern": r"(?u)\b\w\w+\b"}
    char = {"analyzer": "char_wb", "ngram_range": (3, 5), "sublinear_tf": True, "min_df": 2}
    return ColumnTransformer(
        [
            ("title_words", TfidfVectorizer(**word), 0),
            ("title_chars", TfidfVectorizer(**char), 0),
            ("body_words", TfidfVectorizer(min_df=2, max_features=50_000, **word), 1),
        ],
        transformer_weights={
            "title_words": TITLE_WEIGHT,
            "title_chars": TITLE_WEIGHT,
            "body_words": 1.0,
        },
    )


def matrix(docs: Sequence[tuple[str, str]]) -> np.ndarray:
    """The featurizer's input: one row per issue, its title and its prose."""
    return np.array(list(docs), dtype=object).reshape(-1, 2)
