"""Check emitted files against their JSON Schemas (``schemas/<name>.schema.json``).

JSON outputs are parsed with :mod:`json`, TOML outputs with :mod:`tomllib`
(``tomli`` on Python 3.10), YAML outputs with PyYAML's safe loader (the loader
``vllm serve --config`` uses), and validated with ``jsonschema``'s Draft 2020-12
validator (imported lazily: ``sncc check`` never needs it).  Shell scripts have
no schema; they are checked with ``bash -n`` when bash is installed (shellcheck
runs in the test suite, tests/emit/test_shellcheck.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess


def _loads_toml(text: str) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads(text)


def _path(err) -> str:
    p = "$"
    for part in err.absolute_path:
        p += f"[{part}]" if isinstance(part, int) else f".{part}"
    return p


def validate_instance(name: str, instance: object, schema_name: str) -> list[str]:
    """Messages (one line each, sorted by location) for ``instance`` against schema ``schema_name``; [] when valid."""
    import jsonschema

    from sncc import resources

    schema = resources.schema(schema_name)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    v = cls(schema, format_checker=cls.FORMAT_CHECKER)
    errs = sorted(v.iter_errors(instance), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    return [f"{name}: {_path(e)}: {' '.join(e.message.split())}" for e in errs]


def validate_output(name: str, text: str) -> list[str]:
    """Problems of output file ``name`` with contents ``text``, one line each; [] when valid.

    The schema is looked up by file name (:func:`sncc.emit.schema_for`:
    ``decode.yaml`` → ``vllm-serve-config``).  JSON, TOML and YAML files are
    parsed then schema-validated; ``*.sh`` files are syntax-checked with
    ``bash -n`` (skipped when bash is missing); ``schemas/*.schema.json`` copies
    are checked as schemas; other files get no check.
    """
    from sncc.emit import schema_for

    if name.endswith(".schema.json"):
        import jsonschema

        try:
            jsonschema.Draft202012Validator.check_schema(json.loads(text))
        except (ValueError, jsonschema.SchemaError) as e:
            return [f"{name}: not a valid schema: {' '.join(str(e).split()[:30])}"]
        return []
    if name.endswith(".sh"):
        bash = shutil.which("bash")
        if bash is None:
            return []
        res = subprocess.run([bash, "-n"], input=text, capture_output=True, text=True, check=False)
        if res.returncode != 0:
            return [f"{name}: bash -n: {line.strip()}" for line in res.stderr.splitlines() if line.strip()] or [
                f"{name}: bash -n failed"]
        return []
    schema_name = schema_for(name)
    if name.endswith(".json"):
        try:
            instance = json.loads(text)
        except ValueError as e:
            return [f"{name}: invalid JSON: {e}"]
    elif name.endswith(".toml"):
        try:
            instance = _loads_toml(text)
        except ValueError as e:  # tomllib.TOMLDecodeError is a ValueError
            return [f"{name}: invalid TOML: {e}"]
    elif name.endswith((".yaml", ".yml")):
        import yaml

        try:
            instance = yaml.safe_load(text)
        except yaml.YAMLError as e:
            return [f"{name}: invalid YAML: {' '.join(str(e).split())}"]
        if instance is None:
            instance = {}
    else:
        return []
    if schema_name is None:
        return []
    return validate_instance(name, instance, schema_name)


def validate_outputs(files: dict[str, str]) -> list[str]:
    """:func:`validate_output` over every ``{name: text}`` entry, in name order."""
    out: list[str] = []
    for name in sorted(files):
        out += validate_output(name, files[name])
    return out
