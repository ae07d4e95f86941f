"""Quantities with units: durations, byte sizes, token counts, bandwidths.

A quantity is one lexer token: a decimal number glued to a unit (``2s``,
``50ms``, ``16k``, ``64GiB``, ``400GB/s``).  Parsing uses :class:`decimal.Decimal`
so that ``3.5k`` is exactly 3584 tokens.  Units are case-sensitive: ``M`` is
2^20 tokens, ``MB`` is 10^6 bytes, ``m`` is nothing (minutes are ``min``).

Canonical values:

========== ===================== ==============================================
kind       canonical unit        units accepted
========== ===================== ==============================================
duration   seconds (float)       ``ms s min h``
bytes      bytes (int)           ``B KB MB GB TB`` (10^3 steps), ``KiB MiB GiB TiB`` (2^10 steps)
tokens     tokens (int)          ``k`` = 1024, ``M`` = 1048576 (as the seed documents use them)
bandwidth  bytes/second (float)  ``MB/s GB/s TB/s`` (decimal), ``GiB/s TiB/s``
ratio      fraction (float)      ``%``
rate       requests/second       ``/s``, ``/min`` (e.g. ``600/min`` written ``600 /min``: not supported; use ``rate = 10`` req/s)
========== ===================== ==============================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

DURATION = "duration"
BYTES = "bytes"
TOKENS = "tokens"
BANDWIDTH = "bandwidth"
RATIO = "ratio"

#: unit -> (kind, multiplier to the canonical unit)
UNITS: dict[str, tuple[str, Decimal]] = {
    "ms": (DURATION, Decimal("0.001")),
    "s": (DURATION, Decimal(1)),
    "min": (DURATION, Decimal(60)),
    "h": (DURATION, Decimal(3600)),
    "B": (BYTES, Decimal(1)),
    "KB": (BYTES, Decimal(10) ** 3),
    "MB": (BYTES, Decimal(10) ** 6),
    "GB": (BYTES, Decimal(10) ** 9),
    "TB": (BYTES, Decimal(10) ** 12),
    "KiB": (BYTES, Decimal(2) ** 10),
    "MiB": (BYTES, Decimal(2) ** 20),
    "GiB": (BYTES, Decimal(2) ** 30),
    "TiB": (BYTES, Decimal(2) ** 40),
    "k": (TOKENS, Decimal(1024)),
    "M": (TOKENS, Decimal(1048576)),
    "MB/s": (BANDWIDTH, Decimal(10) ** 6),
    "GB/s": (BANDWIDTH, Decimal(10) ** 9),
    "TB/s": (BANDWIDTH, Decimal(10) ** 12),
    "GiB/s": (BANDWIDTH, Decimal(2) ** 30),
    "TiB/s": (BANDWIDTH, Decimal(2) ** 40),
    "%": (RATIO, Decimal("0.01")),
}

KIND_UNITS: dict[str, list[str]] = {}
for _u, (_k, _m) in UNITS.items():
    KIND_UNITS.setdefault(_k, []).append(_u)

_QTY = re.compile(r"^([+-]?)(\d[\d_]*)(\.\d+)?(.*)$")

#: how each kind is named in messages
KIND_NOUN = {
    DURATION: "a duration",
    BYTES: "a byte size",
    TOKENS: "a token count",
    BANDWIDTH: "a bandwidth",
    RATIO: "a ratio",
}


class UnitError(ValueError):
    """Raised for an unknown unit; ``suggestion`` may hold a close unit."""

    def __init__(self, message: str, suggestion: str | None = None) -> None:
        super().__init__(message)
        self.suggestion = suggestion


@dataclass(frozen=True)
class Quantity:
    """A parsed quantity: ``value`` in the canonical unit of ``kind``."""

    kind: str
    value: Decimal
    unit: str

    def canonical(self) -> int | float:
        """Canonical value: int for bytes and tokens when exact, else float."""
        if self.kind in (BYTES, TOKENS):
            v = self.value
            return int(v) if v == v.to_integral_value() else float(v)
        return float(self.value)


def parse_number(text: str) -> Decimal:
    """Parse a plain number token (``12``, ``-3``, ``0.5``, ``1_000``)."""
    try:
        return Decimal(text.replace("_", ""))
    except InvalidOperation as exc:  # pragma: no cover - the lexer only passes numbers
        raise ValueError(f"not a number: {text!r}") from exc


def parse_quantity(text: str) -> Quantity:
    """Parse a quantity token such as ``3.5k`` or ``50ms``.

    Raises :class:`UnitError` when the unit is unknown (with a suggestion when
    one unit differs only by case or is a common alias such as ``sec``).
    """
    m = _QTY.match(text)
    if not m:
        raise UnitError(f"`{text}` is not a quantity")
    sign, whole, frac, unit = m.groups()
    number = Decimal(sign + whole.replace("_", "") + (frac or ""))
    if unit not in UNITS:
        raise UnitError(f"unknown unit `{unit}` in `{text}`", suggest_unit(unit))
    kind, mult = UNITS[unit]
    return Quantity(kind, number * mult, unit)


_ALIASES = {
    "sec": "s", "secs": "s", "second": "s", "seconds": "s", "msec": "ms", "m": "min",
    "mins": "min", "minute": "min", "minutes": "min", "hr": "h", "hour": "h", "hours": "h",
    "K": "k", "kb": "KB", "mb": "MB", "gb": "GB", "tb": "TB", "gib": "GiB", "mib": "MiB",
    "kib": "KiB", "tib": "TiB", "G": "GB", "T": "TB", "b": "B", "Gb/s": "GB/s",
    "gbps": "GB/s", "GBps": "GB/s", "g": "GB",
}


def suggest_unit(unit: str) -> str | None:
    """A likely intended unit for an unknown one, or None."""
    if unit in _ALIASES:
        return _ALIASES[unit]
    for known in UNITS:
        if known.lower() == unit.lower():
            return known
    return None


def format_bytes_gib(n: float) -> str:
    """Format a byte count in GiB with two decimals (``12.34 GiB``); from 1024 GiB up in the next
    binary unit that keeps the figure under 1024 (``29.80 PiB``, not ``31250000.00 GiB``); ``n/a`` for
    a count that is not finite."""
    v = n / 2**30
    if v != v or v in (float("inf"), float("-inf")):
        return "n/a"
    for unit in ("GiB", "TiB", "PiB"):
        if abs(round(v, 2)) < 1024:
            return f"{v:.2f} {unit}"
        v /= 1024
    return f"{v:,.2f} EiB"


def format_count(n: int, word: str, plural: str | None = None) -> str:
    """``n`` and ``word`` in the number ``n`` asks for: ``1 device``, ``2 devices``, ``0 devices``
    (``plural`` when the plural is not ``word + "s"``).  Raises nothing."""
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def format_tokens(n: int) -> str:
    """Format a token count the way plans write it (``16k``, ``3.5k``, ``1M``, ``1000``)."""
    if n >= 1048576 and n % 1048576 == 0:
        return f"{n // 1048576}M"
    if n >= 1024 and (n * 10) % 1024 == 0:
        v = n / 1024
        return f"{v:g}k"
    return str(n)


def format_duration(s: float) -> str:
    """Format seconds compactly (``47 ms``, ``1.93 s``, ``30 min``)."""
    if s < 1:
        return f"{s * 1000:.3g} ms"
    if s < 120:
        return f"{s:.3g} s"
    if s < 7200:
        return f"{s / 60:.3g} min"
    return f"{s / 3600:.3g} h"
