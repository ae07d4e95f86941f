"""Fresh-user findings on hostile or odd input: control characters in names, long strings,
imports of non-files, duplicate diagnostics, a byte-order mark.

Each test failed before its fix (the 1 MB string and the FIFO import did not finish).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading

import pytest
from expect import SCALE_FACTOR, assert_linear

from sncc.compiler import compile_file
from sncc.diagnostics.render_text import render
from sncc.emit import emit_all
from sncc.emit._common import comment_safe, generated_by, one_line
from sncc.source import SourceFile, read_bytes_limited

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

INJECTED = "x\ntouch /tmp/sncc-PWNED\n#"


def diags(text: str, name: str = "plan.sn"):
    return compile_file(SourceFile(name, text)).diagnostics


def plan_text(name: str = "t", engine: str = 'engine "vllm-ascend" { version = "v0.11.0" }', model: str = 'model "qwen3-32b" {}') -> str:
    return (f'plan "{name}" {{\n  {model}\n  hardware {{ system = "atlas-800-a2"  nodes = 1 }}\n  {engine}\n'
            "  serve { instances = 2  devices = 4  tp = 4 }\n  env { HCCL_INTRA_ROCE_ENABLE = 1 }\n"
            "  workload { input { mean = 1k  max = 4k }  output { mean = 1k  max = 4k } }\n}\n")


# --------------------------------------------------------------------------- 1. control characters

@pytest.mark.parametrize("place", ["plan", "model", "served_name", "gateway"])
def test_control_character_in_a_name_is_sn2004_at_the_string(place):
    esc = r"x\ntouch /tmp/sncc-PWNED\n#"
    text = plan_text()
    if place == "plan":
        text = text.replace('plan "t"', f'plan "{esc}"')
    elif place == "model":
        text = text.replace('model "qwen3-32b" {}', f'model "{esc}" {{}}')
    elif place == "served_name":
        text = text.replace('model "qwen3-32b" {}', f'model "qwen3-32b" {{ served_name = "{esc}" }}')
    else:
        text = text.replace("  env {", f'  gateway {{ base_url = "http://h/{esc}" }}\n  env {{')
    ds = [d for d in diags(text) if d.code.code == "SN2004" and "control character" in d.message]
    assert len(ds) == 1, [f"{d.code.code} {d.message}" for d in diags(text)]
    d = ds[0]
    assert "U+000A" in d.message
    assert text[d.span.start:d.span.end].startswith('"') and esc in text[d.span.start:d.span.end]


@pytest.mark.parametrize("esc", [r"\t", r"\r", "\x00", "\x1b", "\x7f", "\x85"])
def test_every_control_character_is_refused(esc):
    """Escaped (`\t`) or written raw into the file: refused either way."""
    ds = diags(plan_text().replace('plan "t"', f'plan "a{esc}b"'))
    assert any(d.code.code == "SN2004" and "control character" in d.message for d in ds)


def test_plain_unicode_names_still_pass():
    ds = diags(plan_text(name="Plan – ü 名前"))
    assert not [d for d in ds if d.is_error], [f"{d.code.code} {d.message}" for d in ds]


def test_comment_safe_escapes_everything_that_ends_a_line():
    out = comment_safe("a\nb\r\tc\x00\x1b\x7f\x85\u2028\u2029z")
    assert out == r"a\nb\r\tc\x00\x1b\x7f\x85\u2028\u2029z"
    assert len(out.splitlines()) == 1
    assert one_line("a\n  b\x1bc") == r"a b\x1bc"
    assert "\n" not in generated_by(INJECTED)


def _bypassed(engine: str, model: str = 'model "qwen3-32b" {}'):
    """A valid plan whose name is then set to the injected text, as if the check were bypassed."""
    comp = compile_file(SourceFile("plan.sn", plan_text(engine=engine, model=model)))
    assert comp.plan is not None, [f"{d.code.code} {d.message}" for d in comp.diagnostics]
    from sncc.lowering import lower

    plan = comp.plan.model_copy(update={"name": INJECTED})
    return emit_all(lower(plan, comp.facts), schemas=False)


@pytest.mark.parametrize("engine,model", [
    ('engine "vllm-ascend" { version = "v0.11.0" }', 'model "qwen3-32b" {}'),
    ('engine "omni-infer" {}', 'model "deepseek-r1" { quant = w8a8 }'),
])
def test_emitters_keep_a_hostile_name_inside_its_comment(engine, model, tmp_path):
    files = _bypassed(engine, model)
    for name, text in files.items():
        assert not any(line.startswith("touch ") for line in text.splitlines()), (name, text[:400])
        if name.endswith(".toml"):
            tomllib.loads(text)
    env = files["env/common.sh"]
    assert r"x\ntouch /tmp/sncc-PWNED\n#" in env
    bash = shutil.which("bash")
    assert bash, "bash is needed to test env/common.sh (.ci/run itself runs under bash)"
    p = tmp_path / "common.sh"
    p.write_text(env)
    r = subprocess.run([bash, "-n", str(p)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # sourcing it must not run the injected command
    marker = tmp_path / "PWNED"
    p.write_text(env.replace("/tmp/sncc-PWNED", str(marker)))
    subprocess.run([bash, "-c", f"GATEWAY_API_KEY=x . {p} >/dev/null 2>&1; true"], capture_output=True)
    assert not marker.exists()


# --------------------------------------------------------------------------- 2. linear secret scan

def test_one_megabyte_string_checks_in_linear_time():
    def check(n: int) -> None:
        ds = diags('plan "' + "x" * n + '" {}\n')
        assert any(d.code.code == "SN2005" for d in ds)

    assert_linear(check, 125_000, 1_000_000, "a 1 MB string literal", repeat=1)


def test_url_password_detection_linear_on_adversarial_shapes():
    from sncc.plan.build import url_with_password

    def scan(shape: tuple[str, int, str]) -> None:
        unit, n, tail = shape
        assert not url_with_password(unit * n + tail)

    for unit, n, tail in (("x", 1_000_000, ""), ("a://", 250_000, ""), ("a:", 500_000, "//"), ("a://b:", 150_000, "")):
        assert_linear(scan, (unit, n // SCALE_FACTOR, tail), (unit, n, tail), f"{unit!r} × {n}{tail}")


#: the former pattern, kept here to show the linear scan finds the same strings
_OLD_URL_RE = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@")


@pytest.mark.parametrize("text", [
    "https://alice:s3cret@host/x", "git+ssh://u:p:q@h/x", "see http://x and ftp://u:p@h", "https://a:@h",
    "https://:b@h", "https://a@h", "HTTPS://a:b@h", "1://a:b@h", "a1://a:b@h", "https://h/a:b@c", "https://a:b c@h",
    "redis://:pw@h", "x://a:b@@", "mongodb+srv://root:pw@cluster0", "http://a:b/c@d", "s3://k:v@", "://a:b@",
])
def test_url_password_detection_matches_the_former_regex(text):
    from sncc.plan.build import url_with_password

    assert url_with_password(text) == bool(_OLD_URL_RE.search(text))


def test_url_password_still_sn2007():
    text = plan_text().replace('model "qwen3-32b" {}', 'model "qwen3-32b" { weights = "https://bob:hunter2xyz@hf.example/m" }')
    ds = [d for d in diags(text) if d.code.code == "SN2007"]
    assert len(ds) == 1
    assert "hunter2xyz" not in ds[0].message


# --------------------------------------------------------------------------- 3. imports of non-files

def _check_file(path, timeout: float = 20.0):
    """Diagnostics of the plan at ``path`` (imports read from disk), or fail after ``timeout`` s."""
    out: list = []
    th = threading.Thread(target=lambda: out.append(compile_file(SourceFile(str(path), path.read_text())).diagnostics),
                          daemon=True)
    th.start()
    th.join(timeout)
    return out[0] if out else None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_import_of_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "fifo.sn"
    os.mkfifo(fifo)
    plan = tmp_path / "p.sn"
    plan.write_text('import "fifo.sn"\nplan "s" {}\n')
    try:
        ds = _check_file(plan)
        assert ds is not None, "check blocked on the FIFO"
        d = next(d for d in ds if d.code.code == "SN2012")
        assert "FIFO" in d.message
    finally:  # release a reader blocked in open(), if any
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
    with pytest.raises(OSError):
        read_bytes_limited(str(fifo), regular_only=True)


@pytest.mark.parametrize("target,word", [("/proc/self/environ", "/proc"), ("/dev/zero", "/dev"), ("sub.sn", "directory"),
                                         (".env", ".sn` file")])
def test_import_of_pseudo_files_and_folders_is_refused(tmp_path, target, word):
    if target.startswith("/") and not os.path.exists(target):
        pytest.skip(f"{target} missing here")
    (tmp_path / "sub.sn").mkdir()
    (tmp_path / ".env").write_text("API_KEY=sk-live-123\n")
    plan = tmp_path / "p.sn"
    plan.write_text(f'import "{target}"\nplan "s" {{}}\n')
    ds = _check_file(plan)
    assert ds is not None
    d = next(d for d in ds if d.code.code == "SN2012")
    assert word in d.message
    assert not any(d.span.file == target for d in ds)


def test_failed_import_shows_only_the_offending_line(tmp_path):
    (tmp_path / "secret.txt").write_text("FIRST_TOKEN = 'abc'\nSECOND_SECRET=zzz-second\nTHIRD_SECRET=zzz-third\n")
    plan = tmp_path / "p.sn"
    plan.write_text('import "secret.txt"\nplan "s" {}\n')
    comp = compile_file(SourceFile(str(plan), plan.read_text()))
    out = render(comp.diagnostics, comp.sources, files=1)
    assert "zzz-second" not in out and "zzz-third" not in out


def test_sn2007_message_never_holds_the_secret():
    secret = "sk-proj-abcdef1234567890abcdef"
    text = plan_text().replace("  env { HCCL_INTRA_ROCE_ENABLE = 1 }",
                               f'  env {{ TOKEN = "{secret}" }}\n  gateway {{ base_url = "https://g/x"  api_key = "{secret}" }}')
    ds = [d for d in diags(text) if d.code.code == "SN2007"]
    assert len(ds) == 2
    for d in ds:
        assert secret not in d.message and secret[6:] not in " ".join([d.message, *(d.notes or []), d.help or ""])


# --------------------------------------------------------------------------- 4. duplicate diagnostics

@pytest.mark.parametrize("body", ["hardware { memory_utilization = 150% }", "hardware { nodes = 0 }",
                                  "workload { requests = 0 }"])
def test_each_missing_key_reported_once(body):
    ds = diags(f'plan "x" {{ {body} }}\n')
    missing = [d.message for d in ds if d.code.code == "SN2005"]
    assert missing and len(missing) == len(set(missing)), missing
    assert any(d.code.code in ("SN2009", "SN2004") for d in ds)


# --------------------------------------------------------------------------- 5. byte-order mark

def test_leading_bom_is_not_a_column():
    text = '\ufeffplan "x" { bogus = 1 }\n'
    src = SourceFile("bom.sn", text)
    assert src.line_col(1) == (1, 1)  # `plan`
    assert src.line_col(0) == (1, 1)
    assert src.line_text(1).startswith("plan")
    assert src.lsp_position(1) == (0, 1)  # LSP counts the text the client sent
    assert src.offset_of_lsp(0, 1) == 1
    ds = diags(text, "bom.sn")
    bogus = next(d for d in ds if "bogus" in d.message)
    assert src.line_col(bogus.span.start) == (1, text.index("bogus"))
    out = render(ds, {"bom.sn": src}, files=1)
    assert "bom.sn:1:1" in out and "\ufeff" not in out


# --------------------------------------------------------------------------- 6. numbers are ASCII digits

@pytest.mark.parametrize("digit", ["\uff14", "\u0668", "\u0664"])   # full-width 4, Arabic-Indic 8 and 4
def test_non_ascii_digits_are_not_numbers(digit):
    """Python's int() reads full-width and Arabic-Indic digits; a plan's numbers are ASCII only
    (a fresh-user test wrote `tp = ４` and it was accepted as 4)."""
    from expect import compile_text

    comp = compile_text(f'plan "x" {{\n  model "qwen3-32b" {{}}\n  hardware {{ system = "hgx-h200"  nodes = 1 }}\n'
                        f'  serve {{ devices = 8  tp = {digit} }}\n}}\n')
    (d,) = [d for d in comp.diagnostics if d.is_error]
    assert d.code.code == "SN1002" and comp.source.line_col(d.span.start) == (4, 29)


def test_a_dotted_quad_outside_ipv4_is_not_a_host_address():
    from expect import compile_text

    text = ('plan "x" {\n  model "qwen3-32b" {}\n  hardware { system = "hgx-h200"  nodes = 2 }\n  engine "vllm" {}\n'
            '  serve { devices = 16  tp = 8  dp = 2 }\n'
            '  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }\n'
            '  hosts { addresses = ["10.0.0.11", "ADDR"] }\n}\n')
    bad = [d for d in compile_text(text.replace("ADDR", "10.0.0.256")).diagnostics if d.code.code == "SN2004"]
    assert bad and "10.0.0.256" in bad[0].message
    assert not [d for d in compile_text(text.replace("ADDR", "node-1.example")).diagnostics if d.code.code == "SN2004"]


def test_a_percentage_written_as_a_ratio_suggests_the_fraction():
    from expect import compile_text

    text = ('plan "x" {\n  model "qwen3-32b" {}\n  hardware { system = "hgx-h200"  nodes = 1  memory_utilization = 90 }\n'
            '  engine "vllm" {}\n  serve { devices = 8  tp = 8 }\n'
            '  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }\n}\n')
    (d,) = [d for d in compile_text(text).diagnostics if d.is_error]
    assert d.code.code == "SN2009" and "`0.9`" in d.help and "`90%`" in d.help


def test_colon_after_many_blank_lines_checks_in_linear_time():
    # the `key: value` help looks for an opened plan block before the error; its pattern re-scanned
    # every run of blank lines (bench/fuzz.py seed 601: 50,000 empty lines took 5 s of CPU)
    def check(n: int) -> None:
        ds = diags("# a comment\n" + "\n" * n + "tp: 8\n")
        assert [d.code.code for d in ds] == ["SN1002"] and "sncc import" in ds[0].help

    assert_linear(check, 25_000, 200_000, "blank lines before a `key: value`", repeat=1)
