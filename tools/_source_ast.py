"""Read a tagged Python source tree with `ast` (never importing it) for the manifest extractors.

* :class:`TagTree` — the ``.py`` (and other text) files of one revision of a git repository
  (``git ls-tree`` + ``git cat-file``), with the commit id;
* :func:`env_table` — the ``env_variables = {"NAME": lambda: os.getenv("NAME", default), ...}`` table
  that vLLM, vllm-ascend and Omni-Infer each keep in an ``envs.py``: name → default and cast;
* :func:`env_reads` — ``os.getenv("X")`` / ``os.environ.get("X")`` / ``os.environ["X"]`` reads with a
  literal name anywhere else in the tree;
* :class:`ConfigReads` — every key a tree reads from vLLM's ``additional_config`` dict, nested
  dicts as dotted keys (``torchair_graph_config.enabled``), with the default where it is a literal.

How :class:`ConfigReads` follows the dict (a small abstract interpretation over the AST):
``<x>.additional_config`` and ``getattr(<x>, "additional_config", ...)`` are the root, and so is a
parameter named ``additional_config``; a name or ``self.<attr>`` assigned from a dict expression
holds that dict; ``d.get("k", default)``, ``d.setdefault("k", ...)``, ``d.pop("k", ...)``,
``d["k"]`` and ``"k" in d`` read key ``k`` (``d.get("k", {})`` is itself a dict, so chains nest);
passing a dict to a function, method or class binds the callee's parameter (string literals passed
beside it bind too, so ``_get_config_value(additional_config, "key", "ENV", ...)`` reads ``key``
and records ``ENV`` as its environment fallback); ``Cls(**d)`` makes the callee's keyword
parameters (or a dataclass's fields) keys of ``d``, and its ``**kwargs`` the same dict; iterating
over ``d.items()`` marks ``d`` *open* (any key accepted) unless the class keeps a literal
``_defaults``-style dict of the keys it accepts; a literal dict default (``d.get("k", {"a": 1})``)
contributes its keys.  Callees are resolved by name within the tree (methods of the same class
first; an attribute call by a method name defined exactly once).
"""

from __future__ import annotations

import ast
import re
import subprocess
from dataclasses import dataclass, field
from typing import Any, Iterable

_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]{2,}$")
#: attribute calls never resolved by method name alone (too common to be one callee)
_COMMON_METHODS = frozenset({
    "get", "set", "update", "items", "keys", "values", "pop", "copy", "append", "extend", "format",
    "join", "split", "replace", "lower", "upper", "strip", "startswith", "endswith", "__init__",
    "setdefault", "add", "remove", "insert", "index", "count", "read", "write", "open", "close",
    "run", "main", "load", "dump", "loads", "dumps", "info", "warning", "error", "debug",
})


class TagTree:
    """The files of ``rev`` in the bare repository ``git_dir`` under the ``prefixes`` whose names end with ``suffixes``.

    ``commit`` is the full commit id; ``files`` maps path → text (UTF-8, undecodable bytes replaced).
    Raises ``subprocess.CalledProcessError`` for an unknown revision."""

    def __init__(self, git_dir: str, rev: str, prefixes: Iterable[str], suffixes: tuple[str, ...] = (".py",)):
        self.git_dir = git_dir
        self.rev = rev
        self.commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", f"{rev}^{{commit}}"],
                                     check=True, capture_output=True, text=True).stdout.strip()
        listing = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", self.commit, "--", *prefixes],
                                 check=True, capture_output=True).stdout.decode("utf-8", "replace")
        blobs: list[tuple[str, str]] = []
        for entry in filter(None, listing.split("\0")):
            meta, path = entry.split("\t", 1)
            _mode, kind, sha = meta.split()
            if kind == "blob" and path.endswith(suffixes):
                blobs.append((path, sha))
        self.files: dict[str, str] = {}
        # one `git cat-file --batch` for every blob: only the wanted files are read, so a partial
        # clone that lacks large binary blobs (Omni-Infer's .npy patterns) still serves the sources
        batch = subprocess.run(["git", "--git-dir", git_dir, "cat-file", "--batch"],
                               input="".join(f"{sha}\n" for _, sha in blobs).encode(),
                               check=True, capture_output=True).stdout
        pos = 0
        for path, _sha in blobs:
            header_end = batch.index(b"\n", pos)
            header = batch[pos:header_end].split()
            pos = header_end + 1
            if len(header) < 3 or header[1] != b"blob":
                continue
            size = int(header[2])
            self.files[path] = batch[pos:pos + size].decode("utf-8", "replace")
            pos += size + 1

    def show(self, path: str) -> str:
        """One file of the revision (any path, not only the archived prefixes)."""
        return subprocess.run(["git", "--git-dir", self.git_dir, "show", f"{self.commit}:{path}"],
                              check=True, capture_output=True, text=True).stdout

    def parsed(self) -> dict[str, ast.Module]:
        """Every ``.py`` file that parses (files that do not are skipped: generated or Python 2 code)."""
        out: dict[str, ast.Module] = {}
        for path, text in sorted(self.files.items()):
            if not path.endswith(".py"):
                continue
            try:
                out[path] = ast.parse(text, filename=path)
            except SyntaxError:
                continue
        return out


def _literal(node: ast.AST | None) -> tuple[bool, Any]:
    """``(True, value)`` when ``node`` is a literal ``ast.literal_eval`` accepts, else ``(False, None)``."""
    if node is None:
        return True, None
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


literal = _literal


def _is_env_get(call: ast.Call) -> bool:
    f = call.func
    if isinstance(f, ast.Attribute) and f.attr == "getenv" and isinstance(f.value, ast.Name) and f.value.id == "os":
        return True
    return (isinstance(f, ast.Attribute) and f.attr == "get" and isinstance(f.value, ast.Attribute)
            and f.value.attr == "environ")


def _cast_of(body: ast.AST, inner: ast.Call) -> str:
    """How the table's lambda turns the string into a value: ``bool(int(...))`` → ``bool-int`` etc."""
    chain: list[str] = []
    node = body
    while isinstance(node, ast.Call) and node is not inner:
        f = node.func
        if isinstance(f, ast.Name):
            chain.append(f.id)
            node = node.args[0] if node.args else None
        elif isinstance(f, ast.Attribute):
            chain.append(f.attr)
            node = f.value
        else:
            break
    return "-".join(chain) if chain else "str"


def env_table(text: str, path: str) -> dict[str, dict[str, Any]]:
    """The ``env_variables`` dict of an ``envs.py``: ``{NAME: {"default": ..., "cast": ..., "defined_in": "path:line"}}``.

    ``default`` is the literal second argument of ``os.getenv`` / ``os.environ.get`` (None when
    absent); a non-literal default is written as ``{"<expr>": source}``; ``cast`` names the calls
    around the read (``bool-int``, ``int``, ``lower``, ``str`` for none)."""
    tree = ast.parse(text, filename=path)
    out: dict[str, dict[str, Any]] = {}
    for node in ast.walk(tree):
        value = None
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in ("env_variables", "environment_variables")
                                                for t in node.targets):
            value = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id in (
                "env_variables", "environment_variables"):
            value = node.value
        if not isinstance(value, ast.Dict):
            continue
        for k, v in zip(value.keys, value.values):
            ok, name = literal(k)
            if not ok or not isinstance(name, str):
                continue
            row: dict[str, Any] = {"defined_in": f"{path}:{k.lineno}", "default": None, "cast": "str"}
            body = v.body if isinstance(v, ast.Lambda) else v
            reads = [c for c in ast.walk(body) if isinstance(c, ast.Call) and _is_env_get(c)]
            if reads:
                call = reads[0]
                if len(call.args) > 1:
                    ok, d = literal(call.args[1])
                    row["default"] = d if ok else {"<expr>": ast.unparse(call.args[1])}
                else:
                    d_kw = [kw.value for kw in call.keywords if kw.arg == "default"]
                    if d_kw:
                        ok, d = literal(d_kw[0])
                        row["default"] = d if ok else {"<expr>": ast.unparse(d_kw[0])}
                row["cast"] = _cast_of(body, call)
            else:
                row["default"] = {"<expr>": ast.unparse(body)}
            out[name] = row
    return out


def env_reads(trees: dict[str, ast.Module], skip: Iterable[str] = (),
              constants: dict[str, Any] | None = None) -> dict[str, list[str]]:
    """Environment variables read with a literal name, or a module constant holding one
    (``LOCAL_RANK_TABLE_ENV = "RANK_TABLE_FILE_PATH"``; ``constants`` from :func:`module_constants`):
    ``{NAME: ["path:line", ...]}`` (sorted)."""
    skip = set(skip)
    constants = constants or {}
    out: dict[str, set[str]] = {}

    def literal(node: ast.AST) -> tuple[bool, Any]:
        if isinstance(node, ast.Name) and isinstance(constants.get(node.id), str):
            return True, constants[node.id]
        return _literal(node)

    for path, tree in trees.items():
        if path in skip:
            continue
        for node in ast.walk(tree):
            name = None
            if isinstance(node, ast.Call) and _is_env_get(node) and node.args:
                ok, name = literal(node.args[0])
            elif (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
                  and node.value.attr == "environ"):
                ok, name = literal(node.slice)
            elif (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn))
                  and isinstance(node.comparators[0], ast.Attribute) and node.comparators[0].attr == "environ"):
                ok, name = literal(node.left)
            if isinstance(name, str) and _ENV_NAME.match(name):
                out.setdefault(name, set()).add(f"{path}:{node.lineno}")
    return {k: sorted(v) for k, v in sorted(out.items())}


def module_constants(trees: dict[str, ast.Module]) -> dict[str, Any]:
    """Module-level ``NAME = <literal>`` assignments of the tree (a name bound twice differently is dropped)."""
    out: dict[str, Any] = {}
    clash: set[str] = set()
    for tree in trees.values():
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                ok, value = literal(node.value)
                name = node.targets[0].id
                if ok and isinstance(value, (str, int, float, bool)):
                    if name in out and out[name] != value:
                        clash.add(name)
                    out[name] = value
    for name in clash:
        out.pop(name, None)
    return out


# ----------------------------------------------------------------------------- additional_config


@dataclass
class _Func:
    path: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    cls: str | None = None

    @property
    def offset(self) -> int:
        if self.cls is None:
            return 0
        decorators = {d.id if isinstance(d, ast.Name) else getattr(d, "attr", "") for d in self.node.decorator_list}
        return 0 if "staticmethod" in decorators else 1


@dataclass
class _Class:
    path: str
    node: ast.ClassDef
    methods: dict[str, _Func] = field(default_factory=dict)

    @property
    def is_dataclass(self) -> bool:
        for d in self.node.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            if (isinstance(target, ast.Name) and target.id == "dataclass") or (
                    isinstance(target, ast.Attribute) and target.attr == "dataclass"):
                return True
        return False

    def class_literals(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for stmt in self.node.body:
            target = value = None
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                target, value = stmt.targets[0].id, stmt.value
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                target, value = stmt.target.id, stmt.value
            if target is not None:
                ok, lit = literal(value)
                if ok:
                    out[target] = lit
        return out

    def fields(self) -> list[tuple[str, ast.AST | None]]:
        """A dataclass's fields: ``(name, default expression or None)`` (``field(default_factory=...)`` unwrapped)."""
        out: list[tuple[str, ast.AST | None]] = []
        for stmt in self.node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                value = stmt.value
                if isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", "")) == "field":
                    kws = {kw.arg: kw.value for kw in value.keywords}
                    if "default" in kws:
                        value = kws["default"]
                    elif "default_factory" in kws:
                        fac = kws["default_factory"]
                        value = fac.body if isinstance(fac, ast.Lambda) else ast.Call(func=fac, args=[], keywords=[])
                out.append((stmt.target.id, value))
        return out


@dataclass
class _Invocation:
    func: _Func
    env: dict[str, tuple[str, Any]]

    def key(self) -> tuple:
        return (id(self.func.node), tuple(sorted((k, v[0], repr(v[1])) for k, v in self.env.items())))


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


class ConfigReads:
    """The ``additional_config`` keys read by the parsed files ``trees`` (``{path: ast.Module}``).

    After construction, :attr:`keys` maps each dotted key to ``{"default", "default_expr"?,
    "read_in": ["path:line"], "how": [...], "open"?, "env_fallback"?, "from_default"?}``; a key that
    holds a nested dict of other keys has ``"kind": "dict"``."""

    def __init__(self, trees: dict[str, ast.Module], root_attr: str = "additional_config") -> None:
        self.trees = trees
        self.root_attr = root_attr
        self.functions: dict[str, list[_Func]] = {}
        self.classes: dict[str, list[_Class]] = {}
        self.methods_by_name: dict[str, list[_Func]] = {}
        self.self_bindings: dict[str, dict[str, str]] = {}
        self.constants = module_constants(trees)
        self.keys: dict[str, dict[str, Any]] = {}
        self._index()
        for _ in range(2):  # self.<attr> bindings made in __init__ reach the other methods on the 2nd pass
            self._seen: set[tuple] = set()
            self._run_entry_points()
        self._finish()

    # ------------------------------------------------------------------ index
    def _index(self) -> None:
        for path, tree in self.trees.items():
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.functions.setdefault(node.name, []).append(_Func(path, node))
                elif isinstance(node, ast.ClassDef):
                    c = _Class(path, node)
                    for item in node.body:
                        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            f = _Func(path, item, node.name)
                            c.methods[item.name] = f
                            self.methods_by_name.setdefault(item.name, []).append(f)
                    self.classes.setdefault(node.name, []).append(c)

    def _run_entry_points(self) -> None:
        for funcs in self.functions.values():
            for f in funcs:
                self._invoke(_Invocation(f, self._default_env(f)))
        for classes in self.classes.values():
            for c in classes:
                for f in c.methods.values():
                    self._invoke(_Invocation(f, self._default_env(f)))

    def _default_env(self, f: _Func) -> dict[str, tuple[str, Any]]:
        env: dict[str, tuple[str, Any]] = {}
        for a in [*f.node.args.posonlyargs, *f.node.args.args, *f.node.args.kwonlyargs]:
            if a.arg == self.root_attr:
                env[a.arg] = ("dict", "")
        return env

    # ------------------------------------------------------------------ recording
    def _record(self, prefix: str, key: str, where: tuple[str, int], how: str,
                default: ast.AST | None = None, has_default: bool = False, cls: str | None = None,
                extra: dict[str, Any] | None = None) -> str:
        dotted = _join(prefix, key)
        row = self.keys.setdefault(dotted, {"read_in": set(), "how": set()})
        row["read_in"].add(f"{where[0]}:{where[1]}")
        row["how"].add(how)
        if prefix:
            self.keys.setdefault(prefix, {"read_in": set(), "how": set()})["kind"] = "dict"
        if has_default:
            self._set_default(row, default, cls)
            if isinstance(default, ast.Dict):
                self._record_literal_dict(dotted, default, where)
        if extra:
            for k, v in extra.items():
                if isinstance(v, list):
                    row.setdefault(k, set()).update(v)
                else:
                    row[k] = v
        return dotted

    def _record_literal_dict(self, prefix: str, node: ast.Dict, where: tuple[str, int]) -> None:
        for k, v in zip(node.keys, node.values):
            ok, name = literal(k)
            if ok and isinstance(name, str):
                dotted = self._record(prefix, name, where, "default-dict", v, True)
                self.keys[dotted]["from_default"] = True

    def _set_default(self, row: dict[str, Any], node: ast.AST | None, cls: str | None) -> None:
        value, expr = self._default_value(node, cls)
        if row.get("default_from") == "class-defaults":
            if value != row.get("default") and expr is None:
                row.setdefault("defaults_seen", []).append(value)
            return
        if expr is None:
            if "default" in row and row["default"] != value:
                row.setdefault("defaults_seen", []).append(value)
            else:
                row["default"] = value
        elif "default" not in row:
            row["default"] = None
            row["default_expr"] = expr

    def _default_value(self, node: ast.AST | None, cls: str | None) -> tuple[Any, str | None]:
        ok, value = literal(node)
        if ok:
            return value, None
        if isinstance(node, ast.Name) and node.id in self.constants:
            return self.constants[node.id], None
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
                and cls is not None):
            for c in self.classes.get(cls, []):
                lits = c.class_literals()
                if node.attr in lits:
                    return lits[node.attr], None
        return None, ast.unparse(node)

    # ------------------------------------------------------------------ evaluation
    def _const(self, node: ast.AST, env: dict[str, tuple[str, Any]]) -> tuple[bool, Any]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return True, node.value
        if isinstance(node, ast.Name) and env.get(node.id, ("",))[0] == "const":
            return True, env[node.id][1]
        return False, None

    def _prefix(self, node: ast.AST, env: dict[str, tuple[str, Any]], cls: str | None) -> str | None:
        if isinstance(node, ast.Attribute):
            if node.attr == self.root_attr:
                return ""
            if isinstance(node.value, ast.Name) and node.value.id == "self" and cls is not None:
                return self.self_bindings.get(cls, {}).get(node.attr)
            return None
        if isinstance(node, ast.Name):
            b = env.get(node.id)
            return b[1] if b and b[0] == "dict" else None
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id == "getattr" and len(node.args) >= 2:
                ok, name = literal(node.args[1])
                if ok and name == self.root_attr:
                    return ""
            if isinstance(f, ast.Attribute) and f.attr in ("get", "setdefault", "pop") and node.args:
                base = self._prefix(f.value, env, cls)
                ok, key = self._const(node.args[0], env)
                if base is not None and ok:
                    return _join(base, key)
            if isinstance(f, ast.Attribute) and f.attr == "copy" and not node.args:
                return self._prefix(f.value, env, cls)
            return None
        if isinstance(node, ast.Subscript):
            base = self._prefix(node.value, env, cls)
            ok, key = self._const(node.slice, env)
            if base is not None and ok:
                return _join(base, key)
            return None
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            return self._prefix(node.values[0], env, cls)
        if isinstance(node, ast.IfExp):
            p = self._prefix(node.body, env, cls)
            return p if p is not None else self._prefix(node.orelse, env, cls)
        return None

    # ------------------------------------------------------------------ walking one invocation
    def _invoke(self, inv: _Invocation) -> None:
        key = inv.key()
        if key in self._seen or len(self._seen) > 20000:
            return
        self._seen.add(key)
        env = dict(inv.env)
        cls = inv.func.cls
        for stmt in inv.func.node.body:
            self._statement(stmt, env, inv, cls)

    def _statement(self, stmt: ast.stmt, env: dict[str, tuple[str, Any]], inv: _Invocation, cls: str | None) -> None:
        """One statement in source order: its own expressions, then its binding, then its nested blocks
        (one environment per invocation, so a binding made in a block is seen after it)."""
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return
        path = inv.func.path
        children: list[ast.stmt] = []
        for _name, value in ast.iter_fields(stmt):
            items = value if isinstance(value, list) else [value]
            for item in items:
                if isinstance(item, ast.expr):
                    self._expression(item, env, inv, cls)
                elif isinstance(item, ast.withitem):
                    self._expression(item.context_expr, env, inv, cls)
                elif isinstance(item, ast.stmt):
                    children.append(item)
                elif isinstance(item, ast.ExceptHandler):
                    children.extend(item.body)
                elif hasattr(ast, "match_case") and isinstance(item, ast.match_case):
                    children.extend(item.body)
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            p = self._prefix(stmt.value, env, cls)
            for t in targets:
                if p is None:
                    continue
                if isinstance(t, ast.Name):
                    env[t.id] = ("dict", p)
                elif (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                      and cls is not None):
                    self.self_bindings.setdefault(cls, {})[t.attr] = p
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            self._loop(stmt.iter, env, cls, path)
        for child in children:
            self._statement(child, env, inv, cls)

    def _expression(self, expr: ast.expr, env: dict[str, tuple[str, Any]], inv: _Invocation, cls: str | None) -> None:
        path = inv.func.path
        for node in ast.walk(expr):
            if isinstance(node, ast.comprehension):
                self._loop(node.iter, env, cls, path)
            elif isinstance(node, ast.Call):
                self._call(node, env, inv, cls)
            elif isinstance(node, ast.Subscript):
                base = self._prefix(node.value, env, cls)
                ok, key = self._const(node.slice, env)
                if base is not None and ok:
                    self._record(base, key, (path, node.lineno), "subscript", cls=cls,
                                 extra=self._via(node.slice, inv))
            elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
                base = self._prefix(node.comparators[0], env, cls)
                ok, key = self._const(node.left, env)
                if base is not None and ok:
                    self._record(base, key, (path, node.lineno), "in", cls=cls, extra=self._via(node.left, inv))

    def _via(self, node: ast.AST, inv: _Invocation) -> dict[str, Any] | None:
        """When the key came in as a string argument of the callee, the callee's name and the other
        environment-variable-looking strings passed with it (an env fallback)."""
        if not isinstance(node, ast.Name) or inv.env.get(node.id, ("",))[0] != "const":
            return None
        envs = [v[1] for k, v in inv.env.items() if k != node.id and v[0] == "const"
                and isinstance(v[1], str) and _ENV_NAME.match(v[1])]
        out: dict[str, Any] = {"via": inv.func.node.name}
        if envs:
            out["env_fallback"] = sorted(envs)
        return out

    def _loop(self, it: ast.AST, env: dict[str, tuple[str, Any]], cls: str | None, path: str) -> None:
        target = it
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr in ("items", "keys"):
            target = it.func.value
        p = self._prefix(target, env, cls)
        if p is None:
            return
        closed = self._closed_keys(cls)
        if closed:
            for k, v in closed.items():
                row = self.keys.setdefault(_join(p, k), {"read_in": set(), "how": set()})
                row["read_in"].add(f"{path}:{it.lineno}")
                row["how"].add("class-defaults")
                # the class's own table of accepted keys is the default, whatever other readers pass
                row["default"] = v
                row["default_from"] = "class-defaults"
            if p:
                self.keys.setdefault(p, {"read_in": set(), "how": set()})["kind"] = "dict"
        else:
            row = self.keys.setdefault(p, {"read_in": set(), "how": set()}) if p else None
            if row is not None:
                row["open"] = True
                row["kind"] = "dict"
                row["read_in"].add(f"{path}:{it.lineno}")
            else:
                self.open_root = True

    def _closed_keys(self, cls: str | None) -> dict[str, Any]:
        if cls is None:
            return {}
        for c in self.classes.get(cls, []):
            for name, value in c.class_literals().items():
                if "default" in name.lower() and isinstance(value, dict) and value:
                    return value
        return {}

    def _call(self, node: ast.Call, env: dict[str, tuple[str, Any]], inv: _Invocation, cls: str | None) -> None:
        path = inv.func.path
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in ("get", "setdefault", "pop") and node.args:
            base = self._prefix(f.value, env, cls)
            ok, key = self._const(node.args[0], env)
            if base is not None and ok:
                self._record(base, key, (path, node.lineno), f.attr,
                             node.args[1] if len(node.args) > 1 else None, True, cls, self._via(node.args[0], inv))
                return
        bound: dict[int | str, tuple[str, Any]] = {}
        star: list[str] = []
        for i, a in enumerate(node.args):
            p = self._prefix(a, env, cls)
            if p is not None:
                bound[i] = ("dict", p)
                continue
            ok, c = self._const(a, env)
            if ok:
                bound[i] = ("const", c)
        for kw in node.keywords:
            if kw.arg is None:
                p = self._prefix(kw.value, env, cls)
                if p is not None:
                    star.append(p)
                continue
            p = self._prefix(kw.value, env, cls)
            if p is not None:
                bound[kw.arg] = ("dict", p)
                continue
            ok, c = self._const(kw.value, env)
            if ok:
                bound[kw.arg] = ("const", c)
        if not any(v[0] == "dict" for v in bound.values()) and not star:
            return
        for callee, offset, klass in self._resolve(f, cls, inv.func.path):
            self._bind_and_invoke(callee, offset, klass, bound, star, (path, node.lineno))

    def _resolve(self, f: ast.AST, cls: str | None, path: str) -> list[tuple[_Func | None, int, _Class | None]]:
        if isinstance(f, ast.Name):
            classes = self.classes.get(f.id, [])
            if classes:
                c = next((c for c in classes if c.path == path), classes[0]) if len(classes) > 1 else classes[0]
                init = c.methods.get("__init__")
                return [(init, 1, c)]
            funcs = self.functions.get(f.id, [])
            if funcs:
                same = [fn for fn in funcs if fn.path == path]
                return [((same or funcs)[0], 0, None)] if len(same or funcs) == 1 or same else []
            return []
        if isinstance(f, ast.Attribute):
            if isinstance(f.value, ast.Name) and f.value.id in ("self", "cls") and cls is not None:
                for c in self.classes.get(cls, []):
                    m = c.methods.get(f.attr)
                    if m is not None:
                        return [(m, m.offset, None)]
            if f.attr in _COMMON_METHODS:
                return []
            cands = self.methods_by_name.get(f.attr, [])
            if len(cands) == 1:
                return [(cands[0], cands[0].offset, None)]
        return []

    def _bind_and_invoke(self, callee: _Func | None, offset: int, klass: _Class | None,
                         bound: dict[int | str, tuple[str, Any]], star: list[str], where: tuple[str, int]) -> None:
        if callee is None:
            # a class without __init__: a dataclass, its fields are the keys of a **dict
            if klass is not None and klass.is_dataclass:
                for p in star:
                    for name, default in klass.fields():
                        self._record(p, name, (klass.path, klass.node.lineno), "dataclass-field",
                                     default, True, klass.node.name)
            return
        args = callee.node.args
        positional = [*args.posonlyargs, *args.args][offset:]
        env: dict[str, tuple[str, Any]] = {}
        for k, v in bound.items():
            if isinstance(k, int):
                if k < len(positional):
                    env[positional[k].arg] = v
            else:
                env[k] = v
        if star:
            defaults = dict(zip([a.arg for a in [*args.posonlyargs, *args.args]][-len(args.defaults):] if args.defaults else [],
                                args.defaults))
            defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
            names = [a.arg for a in positional] + [a.arg for a in args.kwonlyargs]
            for p in star:
                for name in names:
                    self._record(p, name, (callee.path, callee.node.lineno), "keyword-parameter",
                                 defaults.get(name), name in defaults, callee.cls)
                if args.kwarg is not None:
                    env[args.kwarg.arg] = ("dict", p)
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            if a.arg == self.root_attr and a.arg not in env:
                env[a.arg] = ("dict", "")
        self._invoke(_Invocation(callee, env))

    # ------------------------------------------------------------------ result
    def _finish(self) -> None:
        for row in self.keys.values():
            row["read_in"] = sorted(row["read_in"])
            row["how"] = sorted(row["how"])
            if "env_fallback" in row:
                row["env_fallback"] = sorted(row["env_fallback"])
            if "defaults_seen" in row:
                seen = []
                for v in row["defaults_seen"]:
                    if v not in seen and v != row.get("default"):
                        seen.append(v)
                row["defaults_seen"] = seen
                if not seen:
                    del row["defaults_seen"]
            row.setdefault("default", None)
