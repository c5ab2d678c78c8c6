"""Text primitives: answer normalization, tokenizers, sentence segmentation."""

from rageval.text.normalize import normalize_answer, normalized_tokens, remove_citations
from rageval.text.segment import split_sentences
from rageval.text.tokenize import RegexTokenizer, Tokenizer, get_tokenizer

__all__ = [
    "normalize_answer",
    "remove_citations",
    "normalized_tokens",
    "split_sentences",
    "get_tokenizer",
    "Tokenizer",
    "RegexTokenizer",
]
