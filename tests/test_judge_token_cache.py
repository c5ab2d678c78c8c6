"""JudgeRunner.token_counts: the suite tokenizer is looked up once and each text is counted once."""

from rageval.judges import get_judge
from rageval.judges.base import JudgeRunner
from rageval.text import tokenize as tokenize_mod


class CountingTokenizer:
    name = "counting-whitespace"

    def __init__(self):
        self.calls = []

    def tokenize(self, text):
        return text.split()

    def count(self, text):
        self.calls.append(text)
        return len(text.split())


def test_each_text_is_counted_once_across_pairs():
    tok = CountingTokenizer()
    runner = JudgeRunner(lambda p, h: [1.0] * len(p), tokenizer=tok)
    p1, p2 = "Paris is the capital of France.", "The Seine flows through Paris."
    h1, h2 = "Paris is a capital.", "It rains."
    # by hand: whitespace tokens p1 6, p2 5, h1 4, h2 2
    assert runner.token_counts(p1, h1) == (10, 10)
    assert runner.token_counts(p1, h2) == (8, 8)
    assert runner.token_counts(p2, h1) == (9, 9)
    assert runner.token_counts(p1, h1) == (10, 10)  # the pair again
    assert runner.input_tokens(p2, h2) == 7
    assert sorted(tok.calls) == sorted([p1, h1, h2, p2])  # four distinct texts, four counts


def test_the_suite_tokenizer_is_looked_up_once(monkeypatch):
    looked_up = []
    real = tokenize_mod.get_tokenizer

    def spy(spec=None):
        looked_up.append(spec)
        return real(spec)

    monkeypatch.setattr(tokenize_mod, "get_tokenizer", spy)
    runner = get_judge("lexical")
    pairs = [(f"premise number {i} about Paris", f"claim {i % 3}") for i in range(40)]
    counts = [runner.token_counts(p, h) for p, h in pairs]
    assert len(looked_up) == 1
    regex = real("regex")
    assert counts == [(regex.count(p) + regex.count(h),) * 2 for p, h in pairs]


def test_backend_counts_still_win_over_the_suite_tokenizer():
    class Backend:
        id = "truncating"

        def predict(self, premises, hypotheses):
            return [0.5] * len(premises)

        def token_counts(self, premise, hypothesis):
            n = len(premise) + len(hypothesis)
            return n, min(n, 10)

    tok = CountingTokenizer()
    runner = JudgeRunner(Backend(), tokenizer=tok)
    assert runner.token_counts("abcdefgh", "ijkl") == (12, 10)
    assert tok.calls == []
