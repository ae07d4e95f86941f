"""Write tests/import/scripts/<id>.sh from the transcribed launch commands in docs/research.

Each script is node 0's engine command of one published deployment, as a shell script: a source
header (`# source: URL`), the exports / shell variables before the command in the source's order,
then the command with one option per continued line.  Sources:

* docs/research/import-sources/<id>.yaml: `steps` (export, shell_variable, engine_command argv);
* docs/research/known-good/<id>.yaml: `roles[].nodes[0]` (`env`, `args`, `positionals`) for the
  vllm-ascend nightly configs, whose server command is a YAML string or list.

    python tools/import_scripts_from_research.py            # rewrite every script
"""

from __future__ import annotations

import json
import pathlib
import shlex

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "import" / "scripts"
#: known-good files whose nightly config carries the argv (import-sources names them)
KNOWN_GOOD = ("va-nightly-qwen3-235b-bf16-a2-2node-dp", "va-nightly-qwen3.5-397b-w4a8-mtp-a2",
              "va-nightly-qwen3-32b-w8a8-a2", "va-nightly-glm-4.7-w8a8-mtp3", "va-nightly-deepseek-v3.2-w8a8-mtp3",
              "va-nightly-kimi-k2-thinking-tp16", "va-nightly-minimax-m2.7-w8a8-eagle3",
              "va-nightly-qwen3-30b-a3b-w4a8-tp2-no-ep")


def _q(word: str) -> str:
    """Quote like the source would: keep `$VAR` expansions live in double quotes."""
    if "$" in word and "'" not in word and not word.lstrip().startswith("{"):
        return '"' + word.replace('"', '\\"') + '"'
    return shlex.quote(word)


def _command(program: str, argv: list[str]) -> list[str]:
    lines, cur = [], [program]
    for w in argv:
        if w.startswith("-") and cur != [program]:
            lines.append(" ".join(cur))
            cur = []
        cur.append(_q(w) if w not in ("&",) else w)
    lines.append(" ".join(cur))
    return [ln + " \\" for ln in lines[:-1]] + [lines[-1]]


def from_import_source(path: pathlib.Path, index: int = 0) -> tuple[str, str] | None:
    """The script of the ``index``-th node with an engine command (None when there is none)."""
    d = yaml.safe_load(path.read_text(encoding="utf-8"))
    nodes = [n for n in d.get("nodes", []) if any(s["kind"] == "engine_command" for s in n.get("steps", []))]
    if len(nodes) <= index:
        return None
    node = nodes[index]
    out = [f"# {d['title']}", f"# source: {node['source']['url']}", f"# transcribed in docs/research/import-sources/{path.name}"]
    for s in node["steps"]:
        if s["kind"] == "export":
            out.append(f"export {s['name']}={_q(str(s['value']))}")
        elif s["kind"] == "shell_variable":
            out.append(f"{s['name']}={_q(str(s['value']))}")
        elif s["kind"] == "other_command" and s["argv"] and s["argv"][0] in ("if", "else", "elif", "fi", "then"):
            out.append(" ".join(s["argv"]))   # the conditional around the assignments, as written
        elif s["kind"] == "engine_command":
            env = " ".join(f"{n}={_q(str(v))}" for n, v in s.get("inline_env", []))
            out += _command((env + " " if env else "") + s["program"], [str(a) for a in s["argv"]])
            break
    for cf in node.get("config_files", []):   # the YAML --config files, beside the script
        name = pathlib.Path(cf["path"]).name
        (OUT / name).write_text(f"# source: {cf['url']}\n" + yaml.safe_dump(cf["content"], sort_keys=False), encoding="utf-8")
    return d["id"], "\n".join(out) + "\n"


def from_known_good(kid: str) -> tuple[str, str]:
    d = yaml.safe_load((ROOT / "docs" / "research" / "known-good" / f"{kid}.yaml").read_text(encoding="utf-8"))
    role = d["roles"][0]
    node = role["nodes"][0] if role.get("nodes") else role
    out = [f"# {d['title']}", f"# source: {d['source']['url']}", f"# transcribed in docs/research/known-good/{kid}.yaml"]
    for k, v in (node.get("env") or {}).items():
        if v == "DEFAULT_PORT":   # the nightly harness fills it in
            out.append(f"# {k} is set by the vllm-ascend nightly harness (DEFAULT_PORT)")
            continue
        out.append(f"export {k}={_q(str(v).lower() if isinstance(v, bool) else str(v))}")
    argv = list(node.get("positionals") or [d["model"]["hf_id"]])
    for k, v in (node.get("args") or role.get("args") or {}).items():
        if v is True:
            argv.append(f"--{k}")
        elif isinstance(v, (dict, list)):
            argv += [f"--{k}", json.dumps(v)]
        else:
            argv += [f"--{k}", str(v)]
    out += _command("vllm serve", argv)
    return kid, "\n".join(out) + "\n"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    made = [from_import_source(p) for p in sorted((ROOT / "docs" / "research" / "import-sources").glob("*.yaml"))]
    made += [from_known_good(k) for k in KNOWN_GOOD]
    for got in made:
        if got is not None:
            (OUT / f"{got[0]}.sh").write_text(got[1], encoding="utf-8")
            print(got[0])
    (OUT / "nodes").mkdir(exist_ok=True)   # the further nodes of multi-node scripts
    for p in sorted((ROOT / "docs" / "research" / "import-sources").glob("*.yaml")):
        got = from_import_source(p, 1)
        if got is not None:
            (OUT / "nodes" / f"{got[0]}.node1.sh").write_text(got[1], encoding="utf-8")
            print("nodes/" + got[0] + ".node1")


if __name__ == "__main__":
    main()
