"""Text primitives: answer normalization, tokenizers, sentence segmentation."""

from rageval.text.normalize import normalize_answer, remove_citations, normalized_tokens
from rageval.text.segment import split_sentences, passage_to_snippets
from rageval.text.tokenize import get_tokenizer, Tokenizer, RegexTokenizer

__all__ = [
    "normalize_answer",
    "remove_citations",
    "normalized_tokens",
    "split_sentences",
    "passage_to_snippets",
    "get_tokenizer",
    "Tokenizer",
    "RegexTokenizer",
]
