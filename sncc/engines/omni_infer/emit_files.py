"""Omni-Infer's files: ``model_extra_config.<role>.json``, ``omni_placement.<role>.yaml`` and
``inventory.yml`` (the Ansible inventory of its server playbook), from the objects lowering
built (:mod:`sncc.engines.omni_infer.lower`)."""

from __future__ import annotations

import json

from sncc.emit._common import dump_json, generated_by
from sncc.lowering.deployment import Deployment

MODEL_EXTRA_SCHEMA = "omni-infer-model-extra-config"


def yaml_block(obj, indent: int = 0) -> list[str]:
    """Block-style YAML of nested dicts/lists of scalars (keys plain, strings JSON-quoted)."""
    pad = "  " * indent
    out: list[str] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, (dict, list)) and v:
                out.append(f"{pad}{k}:")
                out += yaml_block(v, indent + 1)
            else:
                out.append(f"{pad}{k}: {_scalar(v)}")
    else:
        for v in obj:
            if isinstance(v, (dict, list)) and v:
                sub = yaml_block(v, indent + 1)
                out.append(f"{pad}- {sub[0].strip()}")
                out += sub[1:]
            else:
                out.append(f"{pad}- {_scalar(v)}")
    return out


def _scalar(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return json.dumps(v)
    if isinstance(v, dict):
        return "{}"
    if isinstance(v, list):
        return "[]"
    return json.dumps(str(v), ensure_ascii=False)


def emit(dep: Deployment) -> dict[str, str]:
    """Every Omni-Infer file of the deployment."""
    from sncc.emit._common import schema_ref

    out: dict[str, str] = {}
    for r in dep.roles:
        for name, obj in r.files.items():
            if name.endswith(".json"):
                out[name] = dump_json({"$schema": schema_ref(MODEL_EXTRA_SCHEMA), **obj})
            else:
                head = [f"# yaml-language-server: $schema={schema_ref('omni-placement')}",
                        f"# OmniPlacement configuration of the {r.name} role (omni_placement_config_path); "
                        f"{generated_by(dep.name)}."]
                out[name] = "\n".join(head + yaml_block(obj)) + "\n"
    for name, obj in dep.extra_files.items():
        head = [f"# Ansible inventory for Omni-Infer's tools/ansible/template/omni_infer_server_template.yml; "
                f"{generated_by(dep.name)}.",
                "# Node addresses are read from NODE_<k>_IP on the Ansible controller unless the plan gives them."]
        out[name] = "\n".join(head + yaml_block(obj)) + "\n"
    return out
