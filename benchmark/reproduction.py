"""Does a reproduction agree with the figure it reproduces? One split's verdict, in words.

The reported figure agrees when it lies inside the reproduction's 95% interval of Any
Medal % (mean ± 1.96 SEM over its seeds, as MLE-bench states it); otherwise the
reproduction is lower or higher by the difference, in points. The difference's own
interval (paired over the competitions both ran, or unpaired from two means and SEMs)
is shown beside it, from ``benchmark.compare``.
"""

from __future__ import annotations

from dataclasses import dataclass

Z_95 = 1.959963984540054


@dataclass(frozen=True)
class SplitVerdict:
    split: str
    reported: float  # Any Medal % of the experiment reproduced
    reproduced: float  # the reproduction's
    reproduced_standard_error: float
    difference: float  # reproduced - reported, points
    ci_lower: float  # the difference's 95% interval
    ci_upper: float
    method: str  # "paired" | "unpaired"

    @property
    def interval(self) -> tuple[float, float]:
        """The reproduction's own 95% interval."""
        half = Z_95 * self.reproduced_standard_error
        return self.reproduced - half, self.reproduced + half

    @property
    def agrees(self) -> bool:
        low, high = self.interval
        return low - 1e-9 <= self.reported <= high + 1e-9

    @property
    def text(self) -> str:
        if self.agrees:
            return "reproduced: agrees"
        way = "lower" if self.difference < 0 else "higher"
        return f"reproduced: {way} by {abs(self.difference):.1f} points"

    def to_dict(self) -> dict:
        low, high = self.interval
        return {
            "split": self.split,
            "reported": self.reported,
            "reproduced": self.reproduced,
            "reproduced_standard_error": self.reproduced_standard_error,
            "reproduced_ci_lower": low,
            "reproduced_ci_upper": high,
            "difference": self.difference,
            "ci_lower": self.ci_lower,
            "ci_upper": self.ci_upper,
            "method": self.method,
            "agrees": self.agrees,
            "verdict": self.text,
        }
