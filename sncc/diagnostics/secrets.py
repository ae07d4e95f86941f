"""Shapes of credentials, for SN2007 (a literal secret) and for masking: the plan builder
reports a value that matches, the parser and the text renderer never print one.

Linear-time checks only (no backtracking regex over a long string).
"""

from __future__ import annotations

import re

#: strings that look like credentials: OpenAI/Anthropic/TaoToken-style `sk-…`, bearer tokens,
#: AWS access key ids, GitHub tokens (classic and fine-grained), Hugging Face tokens, Slack
#: tokens, Google API keys, PEM private keys (shapes from gitleaks' default rules,
#: https://github.com/gitleaks/gitleaks/blob/master/config/gitleaks.toml).  No `\b` anchors:
#: a key glued to word characters (`"prefix_sk-live-…"`, `"x" + AKIA…`) is still a key.  Only
#: the short `sk-` prefix must not follow a letter, so that `task-…` and `disk-…` are words.
SECRET_PATTERNS = (
    re.compile(r"(?<![A-Za-z])sk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bBearer\s+[A-Za-z0-9._\-]{16,}"),
    re.compile(r"(?:AKIA|ASIA)[0-9A-Z]{16}"),
    re.compile(r"gh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"github_pat_[A-Za-z0-9_]{22,}"),
    re.compile(r"hf_[A-Za-z0-9]{30,}"),
    re.compile(r"xox[baprs]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"AIza[0-9A-Za-z_\-]{35}"),
    re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----"),
)


def looks_like_secret(text: str) -> bool:
    """True when ``text`` holds a credential shape of :data:`SECRET_PATTERNS` or a URL with a
    password (:func:`url_with_password`)."""
    return url_with_password(text) or any(p.search(text) for p in SECRET_PATTERNS)


_URL_SCHEME_CHAR = re.compile(r"[a-z0-9+.-]")
_URL_AUTHORITY = re.compile(r"[^/\s]*")


def url_with_password(text: str) -> bool:
    """True when ``text`` holds a URL with a ``user:password@`` part, e.g.
    ``https://alice:s3cret@host/path`` (RFC 3986 §3.2.1 userinfo; a scheme of
    ``[a-z][a-z0-9+.-]*``, a non-empty user without ``:``, a non-empty password).

    Linear in ``len(text)``: each ``://`` is looked at once, and the authority
    scanned after it stops at the next ``/``, so scans never overlap.  (A regex
    with an unanchored scheme part backtracks quadratically on long strings.)
    """
    at = text.find("://")
    while at != -1:
        # a scheme: a letter followed by letters, digits, `+`, `.`, `-`, ending right before `://`
        i = at
        while i > 0 and _URL_SCHEME_CHAR.match(text, i - 1):
            i -= 1
        scheme = text[i:at]
        if any("a" <= c <= "z" for c in scheme):
            auth = _URL_AUTHORITY.match(text, at + 3).group(0)
            colon, amp = auth.find(":"), auth.find("@")
            if 0 < colon and colon + 1 < amp:
                return True
        at = text.find("://", at + 3)
    return False


def mask(text: str) -> str:
    """``text`` with every credential-shaped part replaced by ``*`` of the same length
    (so columns and carets still line up); ``text`` itself when nothing matches."""
    if not looks_like_secret(text):
        return text
    chars = list(text)
    for p in SECRET_PATTERNS:
        for mt in p.finditer(text):
            chars[mt.start():mt.end()] = "*" * (mt.end() - mt.start())
    out = "".join(chars)
    if url_with_password(out):  # `scheme://user:password@`: hide the password
        out = re.sub(r"(://[^/\s:@]+:)([^/\s@]+)(@)", lambda m: m.group(1) + "*" * len(m.group(2)) + m.group(3), out)
    return out

