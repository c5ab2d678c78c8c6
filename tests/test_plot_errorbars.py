"""Frontier error bars: a bootstrap bound a rounding error past the mean (a constant metric) is drawn as 0."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from rageval.report.plots import _errorbars


def test_bound_past_the_mean_is_clamped_not_an_error():
    from rageval.report.result import Analysis

    y = 1 / 3
    an = Analysis.from_json(
        {
            "frontier": {
                "intervals": {
                    "s": {
                        "m": {"ci_low": y + 1e-8, "ci_high": y + 1e-8},
                        "achieved_ratio": {"ci_low": 0.5, "ci_high": 0.5 - 1e-9},
                    }
                }
            }
        }
    )
    fig, ax = plt.subplots()
    try:
        _errorbars(ax, an, [(0.5, y, "s", "s")], "m", "k")  # matplotlib raised ValueError on yerr < 0
        (bars,) = ax.containers
        segs = bars.lines[2][0].get_segments()
        assert len(segs) == 1
        (x0, y0), (x1, y1) = segs[0]
        assert x0 == x1 == 0.5 and y0 == y and abs(y1 - (y + 1e-8)) < 1e-12
    finally:
        plt.close(fig)
