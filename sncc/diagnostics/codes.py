"""The error-code registry: every diagnostic code sncc can emit, in one place.

Codes are stable forever.  Groups: SN1xxx syntax, SN2xxx structure, keys,
values and units, SN3xxx parallelism and device counts, SN4xxx quantization,
memory and software versions, SN5xxx scheduler and context lengths, SN6xxx
gateway, SN7xxx SLO feasibility, SN80xx import, SN81xx search, SN9xxx internal;
SNx080-x099 of each group are the simulator's (SN1080, SN2080-SN2085: `sncc calibrate`'s
measurements file).  ``sncc explain CODE`` and
``docs/codes.md`` are generated from this table.
"""

from __future__ import annotations

from dataclasses import dataclass

DOCS_URL = "https://sncc.dev/codes/{code}"


@dataclass(frozen=True)
class ErrorCode:
    """One registered code.

    ``severity`` is the default; ``explanation`` is the long form shown by
    ``sncc explain``; ``bad``/``good`` are a failing and a fixed plan excerpt.
    """

    code: str
    name: str
    severity: str
    summary: str
    explanation: str
    bad: str
    good: str

    @property
    def url(self) -> str:
        """Documentation URL of this code."""
        return DOCS_URL.format(code=self.code)


REGISTRY: dict[str, ErrorCode] = {}
BY_NAME: dict[str, ErrorCode] = {}


def _code(code: str, name: str, severity: str, summary: str, explanation: str, bad: str, good: str) -> ErrorCode:
    if code in REGISTRY or name in BY_NAME:
        raise ValueError(f"duplicate error code {code} / {name}")
    ec = ErrorCode(code, name, severity, summary, explanation.strip(), bad.strip("\n"), good.strip("\n"))
    REGISTRY[code] = ec
    BY_NAME[name] = ec
    return ec


def lookup(code_or_name: str) -> ErrorCode | None:
    """Find a code by ``SN1234`` (case-insensitive) or by its kebab-case name."""
    return REGISTRY.get(code_or_name.upper()) or BY_NAME.get(code_or_name.lower())


# --- SN1xxx syntax ---------------------------------------------------------
SYNTAX_ERROR = _code(
    "SN1001", "syntax-error", "error", "the text is not valid plan syntax",
    "The parser met a token it did not expect. Plans are blocks `name \"label\" { ... }` holding "
    "`key = value` assignments, `key < value` comparisons (in `slo`) and nested blocks.",
    'prefill { tp == 8 }', 'prefill { tp = 8 }')
UNEXPECTED_CHARACTER = _code(
    "SN1002", "unexpected-character", "error", "a character that cannot start any token",
    "The lexer found a character that is not part of the plan language (for example `@`, a "
    "stray quote or a typographic quote `“`). Strings use straight double quotes; comments start with `#`.",
    "model 'deepseek-r1' { }", 'model "deepseek-r1" { }')
UNCLOSED_BLOCK = _code(
    "SN1003", "unexpected-end-of-file", "error", "the file ended inside a block",
    "A block was opened with `{` and the file ended before its `}`.",
    'plan "p" {\n  decode { tp = 1\n}', 'plan "p" {\n  decode { tp = 1 }\n}')
INVALID_ENCODING = _code(
    "SN1004", "invalid-encoding", "error", "the file is not valid UTF-8",
    "Plan files are UTF-8 text. The byte at the reported position cannot be decoded. A file that starts "
    "with a UTF-16 or UTF-32 byte-order mark (what some editors save as \"Unicode\") is reported on the "
    "file alone: save it as UTF-8.",
    "(a file saved as GBK)", "(the same file saved as UTF-8)")
INVALID_SUPPRESSION = _code(
    "SN1005", "invalid-suppression", "warning", "a suppression comment without a reason or with an unknown code",
    "A comment `# sncc: ignore[CODE] reason` on a diagnostic's line (or alone on the line above it) "
    "suppresses that diagnostic. The brackets name one or more codes or names, comma-separated, "
    "and a reason must follow, so that the next reader knows why the check does not apply. A "
    "suppression without a reason, naming an unknown code, or not of that form suppresses nothing "
    "it cannot name and is reported.",
    "decode { max_num_seqs = 256 }  # sncc: ignore[SN4008]",
    "decode { max_num_seqs = 256 }  # sncc: ignore[SN4008] short prompts only: replay trace p99 is 6k")
UNUSED_SUPPRESSION = _code(
    "SN1006", "unused-suppression", "warning", "a suppression comment that suppresses nothing",
    "The code named in `# sncc: ignore[CODE]` is not reported on the line the comment covers, so the "
    "comment is stale (the plan was fixed, or the comment sits on the wrong line). Remove it.",
    "decode { max_num_seqs = 8 }  # sncc: ignore[SN4008] long prompts",
    "decode { max_num_seqs = 8 }")
UNREADABLE_FILE = _code(
    "SN1060", "unreadable-file", "error", "a plan file given on the command line cannot be read",
    "The path does not exist, is not a regular file (a directory; a FIFO, which would block; a "
    "device), lies under `/proc`, `/sys` or `/dev`, or is larger than 64 MiB. sncc reports it as "
    "an error on the file in every output format and exits with status 2 (sncc could not run). "
    "A plan produced by another program is read from stdin with `-`.",
    "sncc check plans/a3.sn   # no such file", "sncc check plans/a3-pod.sn")

# `sncc calibrate`'s measurements file (SN1080, SN2080-SN2085: the simulator's block SNx080-x099,
# docs/design.md §8), located in that file
#: how the explanations below name the file
_MEAS = ("The measurements file of `sncc calibrate` (TOML, or JSON for a `.json` name; README "
         "\"sncc calibrate\") takes `profile`, `fit`, `residual_floor` and `[[point]]` tables (the list may "
         "also be spelt `points`). Every problem of the file is reported at once, at its key or value; "
         "`path` in `--format json` is the key path in the file, array indexes 0-based "
         "(`[\"point\", 0, \"ttft_s\"]`). ")
MEASUREMENTS_SYNTAX_ERROR = _code(
    "SN1080", "measurements-syntax-error", "error", "the measurements file is not valid TOML or JSON",
    _MEAS + "The file does not parse (the reader's message and position are given: an unterminated "
    "string, a missing `=`, a value without quotes, a key given twice in TOML), or its top level is "
    "not a table. Nothing else is checked until it parses.",
    '[[point]]\nplan = examples/seed.sn', '[[point]]\nplan = "examples/seed.sn"')

# --- SN2xxx structure, keys, values, units ---------------------------------
UNKNOWN_KEY = _code(
    "SN2001", "unknown-key", "error", "a key that the enclosing block does not define",
    "Every block has a fixed set of keys. A misspelt key would otherwise be ignored silently "
    "and the default used instead; sncc suggests the closest known key.",
    "decode { max_num_seq = 48 }", "decode { max_num_seqs = 48 }")
DUPLICATE_KEY = _code(
    "SN2002", "duplicate-key", "error", "a key or block given twice in the same block",
    "A key may be set once per block; the second value would silently win in most tools.",
    "prefill { tp = 8  tp = 4 }", "prefill { tp = 8 }")
WRONG_UNIT = _code(
    "SN2003", "wrong-unit", "error", "a quantity of the wrong kind or with an unknown unit",
    "Quantities carry units: durations `ms s min h`, byte sizes `B KB MB GB TB KiB MiB GiB TiB`, "
    "token counts `k` (1024) and `M` (1048576), bandwidths `GB/s TB/s`. A value of another kind "
    "(a byte size where a duration is expected) is an error.",
    "slo { ttft < 2GiB }", "slo { ttft < 2s }")
INVALID_VALUE = _code(
    "SN2004", "invalid-value", "error", "a value of the wrong type or outside the allowed choices",
    "The key expects another type (integer, number, string, boolean, list) or one of a fixed set "
    "of identifiers.",
    "kv_cache { dtype = int9 }", "kv_cache { dtype = int8 }")
MISSING_KEY = _code(
    "SN2005", "missing-key", "error", "a required key or block is missing",
    "Some keys have no sensible default (the model, the hardware, each role's device count).",
    'plan "p" { hardware { nodes = 1 } }', 'plan "p" { model "qwen3-32b" {} hardware { system = "atlas-800-a2" nodes = 1 } ... }')
UNKNOWN_BLOCK = _code(
    "SN2006", "unknown-block", "error", "a block name that is not part of the plan language",
    "The top level of a file holds `plan` blocks; a plan holds model, hardware, engine, prefill, "
    "decode, serve, kv_cache, optimize, speculative, workload, slo, gateway and env.",
    'plan "p" { prefil { } }', 'plan "p" { prefill { } }')
LITERAL_SECRET = _code(
    "SN2007", "literal-secret", "error", "a secret written as a literal",
    "API keys and tokens must never be written into a plan (or into anything sncc emits). "
    "Reference an environment variable with `env(\"NAME\")`; emitted files carry the reference only.",
    'gateway { api_key = "sk-123" }', 'gateway { api_key = env("GATEWAY_API_KEY") }')
UNKNOWN_CATALOG_ENTRY = _code(
    "SN2008", "unknown-catalog-entry", "error", "a chip, system, model or engine sncc does not know",
    "Chip, system and engine ids come from sncc's catalog. A model that is not catalogued can "
    "still be used when `weights` points at a directory holding its Hugging Face `config.json`.",
    'hardware { system = "atlas-900-a4" }', 'hardware { system = "atlas-900-a3-superpod" }')
OUT_OF_RANGE = _code(
    "SN2009", "out-of-range", "error", "a number outside its valid range, or a string too long",
    "Counts are positive integers, ratios lie in their interval (for example "
    "`memory_utilization` in (0, 1]). Strings (names, ids, versions, paths, URLs) are at most 4,096 "
    "characters (Linux PATH_MAX), `hosts.nic` 15 (IFNAMSIZ) and an `env` value 131,071 (MAX_ARG_STRLEN). "
    "`hardware { nodes }` (or `devices`) is at most what its system has (`systems.toml max_nodes`: 48 nodes "
    "of 16 dies for the Atlas 900 A3 SuperPoD).",
    "decode { devices = 0 }", "decode { devices = 64 }")
CHECKPOINT_UNREADABLE = _code(
    "SN2010", "checkpoint-unreadable", "error", "the weights directory has an unreadable config",
    "`weights` points at a directory whose `config.json` or `quant_model_description.json` is not "
    "valid JSON or lacks the fields sncc needs to know the architecture.",
    'model "m" { weights = "/data/broken" }', 'model "m" { weights = "/data/ok" }')
CHECKPOINT_MISMATCH = _code(
    "SN2017", "checkpoint-mismatch", "warning", "the weights are not the model the plan names",
    "`weights` points at a directory whose `config.json` gives a different `model_type` than the catalog "
    "entry of the plan's model id (a Llama checkpoint under `model \"qwen3-32b\"`). sncc sizes memory, "
    "parallelism and the simulator from the config.json it read, while the model id still names the served "
    "model and its catalog facts (custom code, MTP layers). Point `weights` at the right checkpoint, or name "
    "the model the weights hold.",
    'model "qwen3-32b" { weights = "/data/Llama-3.1-70B" }', 'model "qwen3-32b" { weights = "/data/Qwen3-32B" }')
CHECKPOINT_CONFIG_ABSENT = _code(
    "SN2018", "checkpoint-config-absent", "info", "the weights directory holds no config.json",
    "`weights` names a directory that exists here but has no `config.json`, so sncc takes the model's shape "
    "from its catalog entry. The engine reads config.json from the same directory at start-up and fails "
    "without it; check that the path is the checkpoint's top folder.",
    'model "qwen3-32b" { weights = "/data/models" }', 'model "qwen3-32b" { weights = "/data/models/Qwen3-32B" }')
WEIGHTS_PATH_RELATIVE = _code(
    "SN2019", "weights-path-relative", "warning", "a relative `weights` folder is read here but not where the servers run",
    "sncc reads a relative `weights` path from the plan file's folder (its config.json sizes the model), but "
    "the engine gets the path as written: every launch script runs `cd \"$SNCC_OUT\"` (the build folder) "
    "before `vllm serve <weights>`, so the servers look for the folder inside the build folder, which `sncc "
    "build` replaces whole, and vLLM takes a path that names no folder for a Hugging Face Hub repository id. "
    "Write the absolute path at which the serving nodes mount the checkpoint.",
    'model "qwen3-8b" { weights = "models/Qwen3-8B" }', 'model "qwen3-8b" { weights = "/data/models/Qwen3-8B" }')
ROLE_SHAPE = _code(
    "SN2011", "invalid-roles", "error", "the plan's roles are neither disaggregated nor aggregated",
    "A plan serves either with a `prefill` and a `decode` role (disaggregated) or with one "
    "`serve` role (aggregated), not a mix.",
    'plan "p" { prefill { ... } serve { ... } }', 'plan "p" { prefill { ... } decode { ... } }')

IMPORT_NOT_FOUND = _code(
    "SN2012", "import-not-found", "error", "an imported file cannot be read",
    "`import \"path.sn\"` names a file relative to the importing file's folder. The file must "
    "exist and be readable UTF-8.",
    'import "clusters/a3-pod1.sn"  # no such file', 'import "clusters/a3-pod-1.sn"')
IMPORT_CYCLE = _code(
    "SN2013", "import-cycle", "error", "files import each other in a cycle",
    "An imported file may import further files, but never (directly or indirectly) the file that "
    "imports it.",
    '# a.sn\nimport "b.sn"\n# b.sn\nimport "a.sn"', '# a.sn\nimport "b.sn"\n# b.sn (no import of a.sn)')
TRACE_INVALID = _code(
    "SN2015", "trace-invalid", "error", "the workload trace file is unreadable or malformed",
    "`workload { trace = \"file.csv\" }` names a CSV file relative to the plan file, one request per "
    "row (without `requests` a run sends each row once; SN5081): `input_len, output_len` and "
    "optionally `arrival_s` (seconds from the start, non-decreasing). "
    "Lengths are positive integers no larger than the workload's input/output `max` (they set "
    "max_model_len). A header row and `#` comment lines are allowed. The message gives the trace "
    "file's line and column.",
    'workload { trace = "trace.csv" ... }  # trace.csv line 3: "512, many"',
    'workload { trace = "trace.csv" ... }  # trace.csv line 3: "512, 128"')
CONFLICTING_KEYS = _code(
    "SN2016", "conflicting-keys", "error", "two keys that exclude each other are both given",
    "Some keys choose between alternatives, and giving both would leave one silently ignored. "
    "`workload { burstiness }` shapes the gaps of an open loop at `rate`: with `concurrency` alone "
    "(a closed loop: each client sends its next request when the previous one completes) or no "
    "`rate` it would be ignored. `rate` with `concurrency` is no conflict: it is `vllm bench serve "
    "--request-rate` under `--max-concurrency` (requests start at the rate and wait at the client "
    "while `concurrency` are in flight). With neither, the simulator runs min(requests, 64) "
    "closed-loop clients, or replays the arrival times of a trace that has them. "
    "In a role, `ep = N` (the seeds' form: data parallelism with expert parallelism on) and `dp` "
    "exclude each other, as do `ep` and `expert_parallel = false`; redundant experts are given in "
    "`eplb` (per instance) or in `optimize.omni_placement` (per device), not both.",
    "workload { requests = 1000  concurrency = 64  burstiness = 0.5 ... }",
    "workload { requests = 1000  rate = 8  burstiness = 0.5  concurrency = 64 ... }")
HOSTS_ADDRESSES = _code(
    "SN2040", "hosts-addresses-mismatch", "error", "`hosts` cannot name every node of the deployment",
    "Node k of the deployment (in the order `sncc build` lays out instances: prefill, then decode, then "
    "serve; `sncc build` prints which servers each node runs) is `hosts.addresses[k]`. The list must name every node "
    "the deployment uses, each literal an IP address or host name given to one node only; `hosts.nic` must be a "
    "network interface name. `env(\"NAME\")` entries are read when the scripts run, so one name given to two "
    "nodes is an error too: both would get the one address the variable holds. Entries past the nodes the "
    "deployment uses are a warning (SN2041). Without `hosts`, every launch script takes `NODE_<k>_IP` from its caller "
    "instead and stops with a message when it is unset.",
    'hardware { system = "atlas-800-a2"  nodes = 2 }\nhosts { addresses = ["10.0.0.1"] }',
    'hardware { system = "atlas-800-a2"  nodes = 2 }\nhosts { addresses = ["10.0.0.1", env("NODE1_IP")] }')
HOSTS_ADDRESSES_UNUSED = _code(
    "SN2041", "hosts-addresses-unused", "warning", "`hosts.addresses` names more nodes than the deployment uses",
    "Node k of the deployment is `hosts.addresses[k]`, so an entry past the last node the deployment "
    "uses is read by no script. That is most often a miscount: an address list copied from a larger "
    "cluster, or a role smaller than intended (then SN3003 may report idle devices too). The message "
    "gives how many nodes the deployment uses and which entries are unused; remove them, or change the "
    "roles or `hardware.nodes` so that every listed node is used.",
    'hardware { system = "atlas-800-a2"  nodes = 1 }\nhosts { addresses = ["10.0.0.1", "10.0.0.2"] }',
    'hardware { system = "atlas-800-a2"  nodes = 1 }\nhosts { addresses = ["10.0.0.1"] }')
IMPORT_HOLDS_PLAN = _code(
    "SN2014", "imported-plan", "error", "an imported file holds a `plan` block",
    "Imported files hold shared definitions — top-level `hardware`, `model`, `engine`, `gateway`, "
    "`env` … blocks — that the importing plan overrides key by key. A `plan` block in an imported "
    "file is ignored and reported.",
    '# cluster.sn\nplan "x" { hardware { nodes = 11 } }', '# cluster.sn\nhardware { nodes = 11 }')

# `sncc calibrate`'s measurements file (see SN1080)
MEASUREMENTS_UNKNOWN_KEY = _code(
    "SN2080", "measurements-unknown-key", "error", "a key the measurements file or its point does not take",
    _MEAS + "A point takes `plan`, the measured metrics (`ttft_s` [s], `tpot_ms` [ms], `qpm`, the run-level "
    "`client_ttft_s`, `run_tpot_ms`, `run_qpm`, `output_tokens_per_s`), `requests` and `bench_result`. A "
    "misspelt key would otherwise be a measurement silently left out of the fit; the closest known key "
    "is suggested.",
    '[[point]]\nplan = "seed.sn"\ntpot = 47', '[[point]]\nplan = "seed.sn"\ntpot_ms = 47')
MEASUREMENTS_INVALID_VALUE = _code(
    "SN2081", "measurements-invalid-value", "error", "a measurements value of the wrong type or out of range",
    _MEAS + "Measured metrics are numbers > 0 in the unit their name gives (a string, a boolean, `inf` or "
    "`nan` is refused), `requests` a whole number >= 1, `profile` and `plan` strings, `residual_floor` "
    "`true` or `false`, and `fit` a list of profile constants the simulator reads, each named once and "
    "positive in the base profile (the fit scales constants by factors of their base value).",
    '[[point]]\nplan = "seed.sn"\nttft_s = "1.9s"', '[[point]]\nplan = "seed.sn"\nttft_s = 1.9')
MEASUREMENTS_MISSING_KEY = _code(
    "SN2082", "measurements-missing-key", "error", "the measurements file or a point lacks what the fit needs",
    _MEAS + "The file needs at least one `[[point]]`; each point a `plan` and a measured metric (or a "
    "`bench_result` to read them from). Without `fit`, the fit moves the constants the measured metrics "
    "inform (`METRIC_CONSTANTS`), and refuses when they outnumber the measured values: name the constants "
    "to fit then.",
    '[[point]]\nttft_s = 1.9', '[[point]]\nplan = "seed.sn"\nttft_s = 1.9')
MEASUREMENTS_CONFLICTING_KEYS = _code(
    "SN2083", "measurements-conflicting-keys", "error", "two keys of the measurements file that exclude each other",
    _MEAS + "`point` and `points` are two spellings of one list, and a metric written in a point that its "
    "`bench_result` also gives would be measured twice: give one of them.",
    '[[point]]\nplan = "p.sn"\nbench_result = "bench-result.json"\ntpot_ms = 14',
    '[[point]]\nplan = "p.sn"\nbench_result = "bench-result.json"')
MEASUREMENTS_FILE_UNUSABLE = _code(
    "SN2084", "measurements-file-unusable", "error", "a file the measurements name cannot be used",
    _MEAS + "A point's `plan` (relative to the measurements file) must be a plan file that `sncc check` "
    "passes, its `bench_result` the `vllm bench serve --save-result` JSON of a run (or the list of every "
    "client's file of a split `bench.sh`), and `profile` a profile id or a `.toml` profile that loads. The "
    "message says what is wrong with the file named.",
    '[[point]]\nplan = "plans/missing.sn"\ntpot_ms = 47', '[[point]]\nplan = "plans/seed.sn"\ntpot_ms = 47')
MEASUREMENTS_POINT_MISMATCH = _code(
    "SN2085", "measurements-point-mismatch", "error", "a point's plan is not what its benchmark or the profile describes",
    _MEAS + "A point's benchmark must have run the load its plan's workload states (`max_concurrency` is "
    "the workload's `concurrency`, `request_rate` its `rate`), or the simulation predicts another run than "
    "the one measured; and its chip must be one the base profile was made for, or of one of its "
    "generations (`[calibration] chips` / `generations`): one set of efficiencies cannot describe two "
    "chip generations. Fit such a point into the profile of its generation, in its own measurements file.",
    'profile = "ascend-a3"\n[[point]]\nplan = "h200.sn"   # an NVIDIA H200 plan',
    'profile = "nvidia-h200"\n[[point]]\nplan = "h200.sn"')

# --- SN3xxx parallelism and devices -----------------------------------------
PARALLEL_MISMATCH = _code(
    "SN3001", "parallel-size-mismatch", "error", "tp × dp × pp does not equal the instance's devices",
    "Each instance's devices are split as `tp × dp × pp` (`tp × ep × pp` in the seeds' form): "
    "attention is tensor-parallel over `tp` devices and replicated `dp` times (vLLM data-parallel "
    "attention), routed experts spread over all `tp × dp` devices (by expert parallelism, or "
    "tensor-sharded with `expert_parallel = false`), and `pp` pipeline stages multiply that. The "
    "product must equal `devices` (seed 001: TP 8 × EP 8 needs 64 cards), or HCCL group "
    "initialisation fails.",
    "decode { devices = 64  tp = 8  ep = 4 }", "decode { devices = 64  tp = 8  ep = 8 }")
DEVICES_EXCEED = _code(
    "SN3002", "devices-exceed-hardware", "error", "the roles need more devices than the hardware has",
    "The sum over roles of instances × devices must fit in nodes × devices per node.",
    "hardware { nodes = 10 } ... (176 devices needed)", "hardware { nodes = 11 }")
IDLE_DEVICES = _code(
    "SN3003", "idle-devices", "warning", "some devices of the hardware are not used by any role",
    "The hardware has more devices than the roles use. This is legal but usually a mistake.",
    "hardware { nodes = 12 } ... (176 of 192 used)", "hardware { nodes = 11 }")
HEADS_NOT_DIVISIBLE = _code(
    "SN3004", "heads-not-divisible-by-tp", "error", "tp does not divide the model's attention heads",
    "vLLM requires `num_attention_heads % tp == 0`, and for KV heads either `num_kv_heads % tp == 0` "
    "or `tp % num_kv_heads == 0` (KV heads replicated).",
    "serve { devices = 5  tp = 5 }  # Qwen3-235B: 64 q heads, 4 kv heads", "serve { devices = 8  tp = 8 }")
EXPERTS_NOT_DIVISIBLE = _code(
    "SN3005", "experts-not-divisible-by-ep", "error", "routed experts do not spread evenly over the EP group",
    "With static expert placement (Omni-Infer, vllm-ascend), routed experts plus redundant experts "
    "must divide evenly by the expert-parallel group size `tp × ep`.",
    "decode { devices = 6  tp = 2  ep = 3 }  # 128 experts", "decode { devices = 8  tp = 2  ep = 4 }")
EP_ON_DENSE = _code(
    "SN3006", "ep-on-dense-model", "error", "expert parallelism on a model with no experts",
    "`ep > 1` only makes sense for mixture-of-experts models; for a dense model use `tp` (or "
    "separate instances).",
    'model "qwen3-32b" {} serve { devices = 8 tp = 4 ep = 2 }', 'model "qwen3-32b" {} serve { devices = 8 tp = 8 }')

DEVICE_MASK_MISMATCH = _code(
    "SN3007", "device-mask-too-small", "error", "the device mask shows fewer devices than one node of an instance needs",
    "`ASCEND_RT_VISIBLE_DEVICES` (or `CUDA_VISIBLE_DEVICES`) decides which devices a process sees. "
    "An instance needs `tp × ep × pp` devices, of which up to one node's worth run on each node: the "
    "mask must list at least that many distinct device ids, each below the node's device count. An "
    "empty mask means no device is visible: a driver or container-mount problem, not a parallelism "
    "one (vllm-ascend#14628).",
    'serve { devices = 8  tp = 8 }  env { ASCEND_RT_VISIBLE_DEVICES = "0,1" }',
    'serve { devices = 8  tp = 8 }  env { ASCEND_RT_VISIBLE_DEVICES = "0,1,2,3,4,5,6,7" }')
KV_CONNECTOR_UNAVAILABLE = _code(
    "SN3008", "kv-connector-missing", "error", "the plan has no KV-transfer connector its engine offers",
    "Every prefill and decode worker needs a KV-transfer config naming a connector and a role; "
    "without one the prefill worker fails at start (ai-dynamo/aiconfigurator#519). A connector named in "
    "`kv_transfer`, in a disaggregated or an aggregated plan, must exist for the engine (`sncc catalog "
    "connectors`: LLMDataDist is an Ascend connector, vLLM on NVIDIA has none) and in its release "
    "(vllm-ascend removed the LLMDataDist connector in v0.12.0rc1); the help lists the engine's connectors.",
    'prefill { ... }  decode { ... }  kv_transfer { connector = none }',
    'prefill { ... }  decode { ... }  kv_transfer { connector = mooncake }')
KV_CONNECTOR_TP_MISMATCH = _code(
    "SN3009", "kv-connector-tp-mismatch", "error", "prefill and decode TP differ in a way the connector cannot transfer",
    "Connectors without heterogeneous-TP support need `prefill.tp == decode.tp` (vLLM's PyNccl "
    "connector hangs otherwise, vllm#14952). Connectors that support it have a documented ratio "
    "rule, e.g. vllm-ascend's Mooncake/LLMDataDist on non-MLA models: prefill TP ≥ decode TP and "
    "divisible by it.",
    'prefill { devices = 1 tp = 1 }  decode { devices = 2 tp = 2 }  kv_transfer { connector = pynccl }',
    'prefill { devices = 2 tp = 2 }  decode { devices = 2 tp = 2 }  kv_transfer { connector = pynccl }')

DEVICE_MASK_INVALID = _code(
    "SN3020", "device-mask-invalid", "error", "a visible-devices mask lists ids that are not the host's devices, repeats or unsorted ids, or more than the node uses",
    "`ASCEND_RT_VISIBLE_DEVICES` / `CUDA_VISIBLE_DEVICES` list device indices of the host's enumeration, "
    "each once, ascending. CANN drops an id that is not a valid index without an error; the worker then "
    "selects its local rank in the shorter visible list and fails later, naming its rank, not the bad id "
    "(`open device N failed, runtime result = 107001`, vllm-ascend#10227; `Invalid device id` with a "
    "non-contiguous mask, vllm-ascend#449). A mask longer than the devices one node's servers use is a "
    "warning: the engine takes the first ones and the rest stay idle.",
    'hardware { chip = "ascend-910b2"  devices = 4 }  env { ASCEND_RT_VISIBLE_DEVICES = "0,1,3,4" }',
    'hardware { chip = "ascend-910b2"  devices = 4 }  env { ASCEND_RT_VISIBLE_DEVICES = "0,1,2,3" }')
VOCAB_NOT_DIVISIBLE = _code(
    "SN3021", "vocab-not-divisible-by-tp", "error", "the padded vocabulary does not split over the TP group",
    "vLLM's `VocabParallelEmbedding` pads the vocabulary to a multiple of 64 and asserts that the padded "
    "size divides by the tensor-parallel size. Heads may allow a TP that the vocabulary does not: GLM-4.x "
    "has 96 heads (TP 6 divides them) and 151,552 vocabulary entries, which TP 6 does not divide "
    "(vllm#31474, gpustack#3777: `AssertionError: 151552 is not divisible by 6`).",
    'model "glm-4.5" {}  serve { devices = 6  tp = 6 }', 'model "glm-4.5" {}  serve { devices = 8  tp = 8 }')
SPEC_TOKENS_VS_TP = _code(
    "SN3022", "speculative-tokens-vs-tp-under-sequence-parallelism", "error",
    "under sequence parallelism the speculative query length (1 + k) and TP have no common capture size",
    "With sequence parallelism (vLLM `pass_config.enable_sp`; vllm-ascend FlashComm1) captured batch sizes "
    "must be multiples of TP, and with speculative decoding multiples of `1 + k` as well: vLLM takes "
    "`max(1 + k, tp)` and fails at start-up unless it divides by both (\"Can't determine cudagraph shapes "
    "that are both a multiple of 3 … and 4 …\", vllm#29036). Older vllm-ascend releases also fail at init "
    "when `max_num_seqs × (1 + k)` (vllm-ascend#7832) or `max_num_batched_tokens` (#6000) is not a "
    "multiple of TP under FlashComm1.",
    'serve { tp = 4 }  speculative { draft_tokens = 2 }  env { VLLM_ASCEND_ENABLE_FLASHCOMM1 = "1" }',
    'serve { tp = 4 }  speculative { draft_tokens = 3 }  env { VLLM_ASCEND_ENABLE_FLASHCOMM1 = "1" }')
MOE_TP_SHARD = _code(
    "SN3023", "moe-tp-shard-not-aligned", "error", "tensor-sharded experts do not split into whole shards or whole FP8 blocks",
    "Without expert parallelism the routed experts are tensor-sharded over all `tp × dp` ranks: each expert's "
    "intermediate width must divide by that count (`FusedMoE`), and for a block-quantized FP8 checkpoint each "
    "shard must be a whole number of 128-wide weight blocks (\"… is not divisible by weight quantization "
    "block_n\", vllm fp8.py). MiniMax-M2's experts are 1,536 wide: TP 8 gives 192, not a multiple of 128, so "
    "its recipe says \"Pure TP8 is not supported\" while TP 4 and TP 8 with expert parallelism run.",
    'model "minimax-m2" { quant = fp8 }  serve { devices = 8  tp = 8  expert_parallel = false }',
    'model "minimax-m2" { quant = fp8 }  serve { devices = 4  tp = 4  expert_parallel = false }')
PD_CONNECTOR_LAYOUT = _code(
    "SN3024", "pd-connector-unsupported-layout", "error", "the KV connector of this release cannot transfer between these prefill and decode layouts",
    "Each connector and release supports some P/D layouts only: vLLM's MooncakeConnector raises "
    "`NotImplementedError(\"Mooncake: Heterogeneous TP is not supported yet.\")` up to 0.18 and needs one TP "
    "to divide the other from 0.21; hybrid linear-attention models (Qwen3-Next, Qwen3.5) size their physical "
    "KV blocks from the TP-sharded state, so NIXL asserts \"Local block size 16 is not divisible by remote "
    "block size 32\" on every request when P and D TP differ (vllm#42895), and Mooncake before GDN support "
    "fails on them outright (vllm#43765). The support matrix is `engine_rules.toml [[pd_connectors]]`.",
    'model "qwen3.5-397b" {}  kv_transfer { connector = nixl }  prefill { tp = 4 }  decode { tp = 1  dp = 8 }',
    'model "qwen3.5-397b" {}  kv_transfer { connector = nixl }  prefill { tp = 4 }  decode { tp = 4  dp = 2 }')
EPLB_REDUNDANT_NEEDS_BALANCER = _code(
    "SN3025", "redundant-experts-need-eplb", "error", "redundant expert slots on an engine that accepts them only with load balancing on",
    "vLLM refuses `num_redundant_experts` without `--enable-eplb` (ValueError in `ParallelConfig`): redundant "
    "slots exist to be filled by the load balancer. Turn it on (`eplb { dynamic = true }`) or drop the "
    "redundant experts. With EPLB the slots must also split evenly over the EP group (SN3005).",
    'engine "vllm" {}  eplb { redundant_experts = 32 }', 'engine "vllm" {}  eplb { redundant_experts = 32  dynamic = true }')
KV_CONNECTOR_WITHOUT_PEER = _code(
    "SN3026", "kv-connector-without-peer", "warning", "an aggregated plan names a KV connector that needs a prefill/decode peer",
    "P/D transfer connectors (NIXL, Mooncake, LLMDataDist, P2pNccl, PyNccl) move the KV cache from a prefill "
    "instance (`kv_producer`) to a decode instance (`kv_consumer`; vLLM's disaggregated prefilling, "
    "https://docs.vllm.ai/en/latest/features/disagg_prefill.html). An aggregated plan has one `serve` role and "
    "no such peer, so sncc writes no `kv_transfer_config` for the connector it names. A connector that works "
    "on one server, KV offload such as LMCache's `LMCacheConnectorV1` (`aggregated = true` in "
    "`software.toml [[kv_connectors]]`), is written with `kv_role = kv_both` instead.",
    'engine "vllm" {}  serve { devices = 4  tp = 4 }  kv_transfer { connector = nixl }',
    'engine "vllm" {}  serve { devices = 4  tp = 4 }')
PD_SPECULATIVE_TOKENS = _code(
    "SN3027", "pd-speculative-tokens-mismatch", "error",
    "prefill and decode draft token counts the P/D connector cannot transfer between",
    "vllm-ascend's Mooncake connector lets the decode instance work out which prefill KV blocks and layers "
    "to pull from its own speculative setting. For a hybrid linear-attention model (Qwen3-Next, Qwen3.5) "
    "the Mamba state is read from the block `num_speculative_tokens + 1` from the end of the prefill's "
    "list, so prefill and decode must draft the same number of tokens (no speculation counts as 0), or "
    "decode continues from another block's state and answers wrongly without an error (vllm-ascend#16160). "
    "For other models a drafting decode also pulls the draft layers' KV (MTP: one layer), which only a "
    "drafting prefill fills: vllm-ascend documents 1 token on prefill and 1 or more on decode. The rows "
    "are `engine_rules.toml [[pd_speculative]]`.",
    'model "qwen3.5-397b" {}  kv_transfer { connector = mooncake }\n'
    'prefill { speculative { draft_tokens = 1 } }  decode { speculative { draft_tokens = 3 } }',
    'model "qwen3.5-397b" {}  kv_transfer { connector = mooncake }\n'
    'prefill { speculative { draft_tokens = 3 } }  decode { speculative { draft_tokens = 3 } }')
PLAN_TOO_LARGE = _code(
    "SN3060", "plan-too-large", "error", "the plan has more devices or instances than sncc lays out in one deployment",
    "One plan is one deployment: `sncc check` lays out every server process, node and port of it and "
    "`sncc simulate` runs every instance. sncc takes at most `max_devices` devices and `max_instances` "
    "instances per plan; both, each with its reason, are in `sncc/catalog/data/limits.toml [plan]` with "
    "their sources, and the message prints them. A plan past that is nearly always a typo "
    "(`nodes = 100000`), and it is refused before any per-instance work, so that `check` and `simulate` "
    "answer at once; a suppression comment does not let `build` or `simulate` through. Each value is "
    "reported once: hardware past its system is SN2009, roles past the hardware SN3002. Several such "
    "deployments are several plans.",
    'hardware { system = "hgx-h100"  nodes = 100000 }\nserve { instances = 100000  devices = 8  tp = 8 }',
    'hardware { system = "hgx-h100"  nodes = 16 }\nserve { instances = 16  devices = 8  tp = 8 }')

# --- SN4xxx quantization, memory, software --------------------------------
QUANT_MISMATCH = _code(
    "SN4001", "quant-mismatch-checkpoint", "error", "the plan's quantization differs from the checkpoint's",
    "vLLM refuses to start when the `quantization` argument differs from the method recorded in "
    "the checkpoint (`config.json` `quantization_config`, or msModelSlim's "
    "`quant_model_description.json`).",
    "quant = w4a8  # checkpoint is W8A8_DYNAMIC", "quant = w8a8")
QUANT_UNSUPPORTED = _code(
    "SN4002", "quant-unsupported-on-chip", "error", "the chip cannot run this weight format",
    "FP8, MXFP8 and MXFP4 run only on Ascend 950 (device type A5); Atlas A2/A3 run INT8 formats "
    "(W8A8, W4A8); Ascend 910A has no BF16. The engine must take the format too: vLLM on CUDA has "
    "no `--quantization ascend` (msModelSlim formats load only on vllm-ascend), so an msModelSlim "
    "checkpoint is refused there; its W8A8 is a compressed-tensors checkpoint.",
    "quant = mxfp8  # on atlas-900-a3-superpod", "quant = w8a8")
KV_DTYPE_UNSUPPORTED = _code(
    "SN4003", "kv-dtype-unsupported-on-chip", "error", "the chip cannot hold the KV cache in this dtype",
    "An FP8 KV cache needs Ascend 950 or an NVIDIA GPU with FP8; Atlas A2/A3 quantize the KV "
    "cache to INT8 (C8) instead.",
    "kv_cache { dtype = fp8 }  # on A3", "kv_cache { dtype = int8 }")
KV_DOES_NOT_FIT = _code(
    "SN4004", "kv-cache-does-not-fit", "error", "weights plus KV cache plus reserves exceed device memory",
    "Per device of each role: weight shard + KV cache for the admitted sequences at full context "
    "+ activation/workspace reserve + HCCL buffers (2 × HCCL_BUFFSIZE per communicator) must fit "
    "in HBM × memory utilization.",
    "decode { max_num_seqs = 512 }", "decode { max_num_seqs = 48 }")
KV_OVERCOMMITTED = _code(
    "SN4008", "kv-cache-overcommitted", "warning", "max_num_seqs sequences at full context do not fit in the KV cache",
    "The engine starts, but when long requests arrive it cannot hold `max_num_seqs` sequences at "
    "`max_model_len` at once: it queues or preempts them, and TTFT and TPOT suffer. The message "
    "gives the largest concurrency that fits at full context.",
    "decode { max_num_seqs = 256 }  # 48k context", "decode { max_num_seqs = 8 }")
CANN_UNSUPPORTED_CHIP = _code(
    "SN4005", "cann-unsupported-chip", "error", "the CANN release does not support the chip",
    "Each CANN release lists the chips it supports; Atlas A3 first appears in CANN 8.1.RC1 and "
    "Ascend 950 in CANN 9.0.0/9.1.0.",
    'hardware { system = "atlas-900-a3-superpod"  cann = "8.0.RC3" }',
    'hardware { system = "atlas-900-a3-superpod"  cann = "8.2.RC1" }')
CANN_ENGINE_MISMATCH = _code(
    "SN4006", "cann-engine-mismatch", "error", "the CANN release is not the one paired with the engine release",
    "vllm-ascend, vLLM, torch, torch_npu and CANN form one compatibility set: pick a whole row of "
    "the release matrix.",
    'engine "vllm-ascend" { version = "v0.11.0" }  hardware { cann = "8.0.RC3" }',
    'engine "vllm-ascend" { version = "v0.11.0" }  hardware { cann = "8.3.RC2" }')
ENGINE_UNSUPPORTED_CHIP = _code(
    "SN4007", "engine-unsupported-chip", "error", "the engine release does not support the chip",
    "vllm-ascend supports Atlas A3 from v0.10.0rc1 and Ascend 950 from v0.17.0rc1; Ascend 910A "
    "is not supported. vllm-ascend and Omni-Infer run on Ascend (vendor huawei) chips only "
    "(engines.toml [engine_hardware]).",
    'engine "vllm-ascend" { version = "v0.9.2rc1" }  # on A3', 'engine "vllm-ascend" { version = "v0.11.0" }')

KV_CONNECTOR_MISCONFIGURED = _code(
    "SN4009", "kv-connector-misconfigured", "error", "the KV-transfer connector's settings do not match the deployment",
    "The Mooncake connector on Ascend needs CANN newer than 8.3.RC1 and "
    "`kv_connector_extra_config.use_ascend_direct = true` (vllm-ascend#5635); its `prefill`/`decode` "
    "`tp_size`/`dp_size` must equal the real sizes of the P and D instances, and P and D on one host "
    "need `HCCL_INTRA_ROCE_ENABLE=1` (vllm-ascend#4866).",
    'kv_transfer { connector = mooncake  use_ascend_direct = false }',
    'kv_transfer { connector = mooncake  use_ascend_direct = true }')
HCCL_BUFFER_TOO_SMALL = _code(
    "SN4010", "hccl-buffer-too-small", "error", "HCCL_BUFFSIZE is smaller than the MoE dispatch/combine kernel needs",
    "The fused MoE dispatch/combine kernels keep their windows in the HCCL buffer: "
    "`2 × (maxBs × dispatch_bytes × ep_world × local_experts + maxBs × combine_bytes × (top_k + shared)) / 2^20` MB, "
    "with maxBs the tokens one rank dispatches per step: the decode step's share of the TP group, at most "
    "vllm-ascend's MC2 token capacity (the largest captured graph size; larger steps take the all-to-all "
    "path, `pins.toml [[mc2_capacity]]`). A smaller `HCCL_BUFFSIZE` fails at tiling "
    "(error 561002) or with a memory-range fault (vllm-ascend#5287, #2674).",
    'env { HCCL_BUFFSIZE = 200 }  # needs 609 MB', 'env { HCCL_BUFFSIZE = 640 }')
GRAPH_MODE_UNSUPPORTED = _code(
    "SN4011", "graph-mode-unsupported", "error", "the graph mode does not support this model family or release",
    "Each engine release runs some graph modes for some model families only: vllm-ascend v0.9.0 "
    "ACL graph (the default) raises NotImplementedError for DeepSeek models (vllm-ascend#1458); "
    "TorchAir graph mode exists v0.9.x–v0.11.x only, for DeepSeek/Pangu/Kimi-K2/Qwen, and was "
    "removed in v0.12.0rc1.",
    'model "deepseek-v3" {}  engine "vllm-ascend" { version = "v0.9.0rc2" }  # ACL graph by default',
    'model "deepseek-v3" {}  engine "vllm-ascend" { version = "v0.9.0rc2" }  graph { mode = torchair }')
SOFTWARE_MISMATCH = _code(
    "SN4012", "software-version-mismatch", "error", "torch, torch_npu or vLLM are not the versions the engine release pairs with",
    "vllm-ascend pins one torch / torch_npu / vLLM / CANN set per release: `torch` and `torch_npu` "
    "must share the release's torch version and `vllm` must be the paired vLLM; a mix makes the NPU "
    "backend unusable and vLLM falls back to CPU (vllm-ascend#7587, #5710).",
    'engine "vllm-ascend" { version = "v0.11.0rc1" }  software { vllm = "0.11.0"  torch = "2.8.0" }',
    'engine "vllm-ascend" { version = "v0.11.0rc1" }  software { vllm = "0.11.0"  torch = "2.7.1" }')
OPTION_REMOVED = _code(
    "SN4013", "option-removed-in-release", "error", "the plan uses an engine option the release does not have",
    "Engine options come and go with releases: vllm-ascend removed the Ascend scheduler "
    "(`ascend_scheduler_config`) and TorchAir graph mode in v0.12.0rc1. An option outside its "
    "release range is rejected at start-up or silently ignored.",
    'engine "vllm-ascend" { version = "v0.13.0" }  serve { scheduler = ascend }',
    'engine "vllm-ascend" { version = "v0.13.0" }  serve { chunked_prefill = 8k }')
HCCL_CONNECT_TIMEOUT = _code(
    "SN4014", "hccl-connect-timeout", "warning", "HCCL_CONNECT_TIMEOUT is out of range or short for a multi-node start-up",
    "HCCL waits `HCCL_CONNECT_TIMEOUT` seconds (CANN range [120, 7200], default 120) for every rank "
    "of a communicator to connect. Ranks on several nodes finish loading weights and compiling "
    "graphs at different times; below about 600 s multi-node MoE jobs fail with EI0006 "
    "(vllm-project/afd-plugin#229, vllm-ascend#5461). A value outside [120, 7200] is an error.",
    'env { HCCL_CONNECT_TIMEOUT = 120 }  # 4 nodes, MoE', 'env { HCCL_CONNECT_TIMEOUT = 1200 }')

OPTION_NOT_APPLIED = _code(
    "SN4015", "option-not-applied", "warning", "an option the plan's engine, release or chip does not have",
    "Some optimisations exist only in one engine or on one chip: OmniAttn and OmniProxy are "
    "Omni-Infer components, OmniPlacement's redundant experts need Omni-Infer or vllm-ascend's EPLB, "
    "SuperKernel fusion and the TorchAir graph cache are Ascend features. Others exist only in some "
    "releases or act only on some models: vllm-ascend's SuperKernel fusion "
    "(`torchair_graph_config.enable_super_kernel`) and dual-batch overlap (`VLLM_ASCEND_ENABLE_DBO`, "
    "from `micro_batch = 2`) were removed in v0.12.0rc1; the first fuses only MoE layers with W8A8 "
    "weights, the second acts only on DeepSeek (MLA) models. sncc does not emit them where they do not "
    "apply and the simulator does not credit them, so the plan would overstate what it runs.",
    'engine "vllm" {}  optimize { superkernel_layers = 58 }  # on hgx-h100',
    'engine "vllm" {}  # no Ascend-only options on NVIDIA')
MTP_WITHOUT_LAYERS = _code(
    "SN4016", "mtp-without-mtp-layers", "error", "MTP speculative decoding on a model with no MTP layers",
    "Multi-token prediction drafts tokens with the model's own MTP layers (`num_nextn_predict_layers` in "
    "config.json, e.g. DeepSeek-V3/R1). A model without them cannot use `method = mtp`; use a draft "
    "model or EAGLE head instead.",
    'model "qwen3-30b-a3b" {}  speculative { method = mtp  acceptance = 0.7 }',
    'model "qwen3-30b-a3b" {}  speculative { method = eagle3  model = "/data/eagle3-qwen3"  acceptance = 0.6 }')
OPTION_PRECONDITION = _code(
    "SN4017", "option-precondition-unmet", "error", "the plan breaks a precondition the engine release sets for an option",
    "Some engine options are accepted only together with other settings, and the engine refuses to start "
    "otherwise. vllm-ascend's SuperKernel fusion (`torchair_graph_config.enable_super_kernel`, from "
    "`optimize { superkernel_layers }`, v0.9.1 branch and v0.11.x) is valid only with TorchAir graph mode, and in "
    "v0.11.x only with tensor_parallel_size = 1 (RuntimeError in `ascend_config.py`); v0.9.1 refuses dual-batch "
    "overlap (`VLLM_ASCEND_ENABLE_DBO`, from `micro_batch = 2`) with speculative decoding or a model_type "
    "without `deepseek`. sncc does not write such an option: make the precondition hold or drop the option. "
    "The rules of each release are in `sncc/engines/vllm_ascend/data/options.toml` `[[vllm_ascend_options]]`.",
    'engine "vllm-ascend" { version = "v0.11.0" }  graph { mode = torchair }\n'
    'decode { devices = 64  tp = 4  ep = 16 }  optimize { superkernel_layers = 58 }',
    'engine "vllm-ascend" { version = "v0.11.0" }  graph { mode = torchair }\n'
    'decode { devices = 64  tp = 1  ep = 64 }  optimize { superkernel_layers = 58 }')
DRAFT_MODEL_MISSING = _code(
    "SN4018", "speculative-draft-model-missing", "error", "speculative decoding with a separate drafter but no draft checkpoint",
    "`method = draft_model`, `eagle` and `eagle3` draft tokens with a separate checkpoint (a small model or an "
    "EAGLE head trained for the target model). vLLM (and the engines built on it: vllm-ascend, Omni-Infer) "
    "refuses to start when `speculative_config.model` is missing (\"num_speculative_tokens was provided but "
    "without speculative model\", vllm/config/speculative.py). Set `speculative.model` to the draft checkpoint, "
    "or use a method that needs none: `mtp` (a model with MTP layers) or `ngram`.",
    'speculative { method = eagle3  draft_tokens = 2  acceptance = 0.6 }',
    'speculative { method = eagle3  model = "/data/eagle3-qwen3-32b"  draft_tokens = 2  acceptance = 0.6 }')
ENGINE_VERSION_NOT_PINNED = _code(
    "SN4040", "engine-version-not-pinned", "info", "the engine release is not one sncc pins its launch files to",
    "`sncc build` writes launch files for the engine releases whose arguments, `additional_config` keys and "
    "environment variables it has read from the tagged sources and checks in CI (`sncc/engines/<engine>/data/`): "
    "vLLM 0.11.0 and 0.23.0, vllm-ascend v0.11.0 and v0.23.0, Omni-Infer release_v0.3.0. For another release the "
    "checks still use the release matrix, but the launch files follow the nearest pinned release and are not "
    "verified against this one. Pin the engine to a release sncc knows. A release newer than any sncc knows "
    "(its pins, manifests and release rows) is a warning: the rules stop at the newest known release, so "
    "nothing sncc checks has read the newer one.",
    'engine "vllm-ascend" { version = "v0.13.0" }',
    'engine "vllm-ascend" { version = "v0.23.0" }')
OPTION_ABSENT_IN_PIN = _code(
    "SN4041", "option-absent-in-pinned-release", "warning", "the pinned engine release has no such option",
    "The plan sets an option that the pinned engine release reads nowhere, so sncc writes it nowhere: for "
    "Omni-Infer release_v0.3.0 the OmniPlacement adjustment interval (`omni_placement.adjust_interval`; "
    "OmniPlacement reads only `enable_dynamic`), OmniAttn's `compress_ratio` and `search` (OmniAttn is switched "
    "on by `enable_omni_attn` and searches its own pattern), the global proxy's `apc_aware` and any policy that "
    "`global_proxy.sh` does not know (e.g. the seed's `OAS`), and an INT8 KV cache. The environment variables "
    "seed 000 gives for micro-batching, SuperKernel fusion and the TorchAir graph cache exist in no Omni-Infer or "
    "vllm-ascend code: sncc writes the real spellings (`enable_prefill_micro_batch`, `use_super_kernel`, `use_ge_graph_cached` with "
    "`TORCHAIR_CACHE_HOME`). The source of each fact is in `sncc/engines/omni_infer/data/pins.toml`.",
    'engine "omni-infer" {}  optimize { omni_proxy { policy = OAS  apc_aware = true } }',
    'engine "omni-infer" {}  optimize { omni_proxy { policy = pd_score_balance } }')
DEPLOYMENT_IMPOSSIBLE = _code(
    "SN4042", "deployment-impossible", "error", "the plan cannot be laid out as engine servers",
    "Lowering places every instance on nodes and devices and writes the engine's launch files. It fails when "
    "a data-parallel rank would span two nodes (tp × pp must divide the devices per node for an instance "
    "larger than a node), when the instances need more nodes than the plan has, or when sncc has no launch "
    "facts for the chosen KV connector on the pinned release. This error cannot be suppressed for `sncc build`.",
    'hardware { system = "atlas-800-a2"  nodes = 2 }\nserve { devices = 12  tp = 6  ep = 2 }',
    'hardware { system = "atlas-800-a2"  nodes = 2 }\nserve { devices = 16  tp = 8  ep = 2 }')

PORT_CONFLICT = _code(
    "SN4043", "port-conflict", "error", "two servers of the deployment would listen on the same port of a node",
    "Every server on a node takes its own API port (`hosts.port` and up), every multi-rank instance its own "
    "data-parallel RPC port (`hosts.dp_rpc_port` and up), every P/D instance a range of KV-transfer ports "
    "from `hosts.kv_port` (Mooncake: one per device of the instance; NIXL's side channel, "
    "`VLLM_NIXL_SIDE_CHANNEL_PORT`: one per TP rank on vLLM 0.11.0, one per DP rank on 0.23.0; vllm-ascend "
    "LLMDataDist's `VLLM_ASCEND_LLMDD_RPC_PORT`: one per TP rank), and the proxy `hosts.proxy_port` on node 0. Two of these on the same port of a node fail at start-up with "
    "\"address already in use\". Move one base so the ranges do not overlap.",
    'hosts { port = 9000  proxy_port = 9000 }',
    'hosts { port = 8000  proxy_port = 9000 }')

PORT_OUT_OF_RANGE = _code(
    "SN4047", "port-out-of-range", "error", "a listener's port, counted up from its `hosts` base, is past 65535",
    "The `hosts` keys are port bases: each further server on a node takes the next API port after `hosts.port`, "
    "each further multi-rank instance the next DP RPC port after `hosts.dp_rpc_port`, and each P/D rank its "
    "KV-transfer ports from `hosts.kv_port` (Mooncake: one per device of the instance). A TCP port is 16 bits "
    "(RFC 9293 §3.1), so a base near 65535 leaves the later servers a port that does not exist, and they fail "
    "at start-up. Lower the base so the whole range fits. This error cannot be suppressed for `sncc build`.",
    'decode { devices = 16  tp = 4  dp = 4 }  # 4 API servers on the node\nhosts { port = 65534 }  # 65534 to 65537',
    'decode { devices = 16  tp = 4  dp = 4 }\nhosts { port = 8000 }  # 8000 to 8003')

ENV_VARIABLE_UNREAD = _code(
    "SN4044", "env-variable-unread", "info", "nothing in the pinned engine release reads this environment variable",
    "`sncc build` exports only variables someone reads: the pinned engine release, the vLLM it runs (their "
    "manifests, `sncc/engines/<engine>/data/<version>.json`, extracted from the tagged sources) or the stack "
    "below them (`sncc/engines/cann_env.json`: CANN, HCCL, torch_npu, NCCL, gloo). A plan `env` entry none of "
    "them reads is left out of `env/*.sh` and listed in `manifest.json` (`env_not_written`): it changes nothing "
    "at run time, and is often a variable a newer or older release renamed (vllm-ascend v0.23.0 reads "
    "`VLLM_ASCEND_ENABLE_FLASHCOMM1`, not `VLLM_ASCEND_ENABLE_FLASHCOMM`) or removed (`VLLM_USE_V1`). "
    "When an older release sncc has a manifest for read it, the message names the newest such release "
    "(`VLLM_USE_V1`: vLLM 0.11.0). Use the release's own spelling, or remove the entry. A name close to one the "
    "release reads (`HCCL_BUFSIZE`, `hccl_buffsize` for `HCCL_BUFFSIZE`: a typo, a change of case, a renamed "
    "variable) is a warning with the rename as its fix, since the value the plan meant never reaches the servers.",
    'engine "vllm-ascend" { version = "v0.23.0" }  env { VLLM_USE_V1 = "1" }',
    'engine "vllm-ascend" { version = "v0.23.0" }  env { VLLM_ASCEND_ENABLE_FLASHCOMM1 = "1" }')

ENGINE_VALUE_REFUSED = _code(
    "SN4045", "engine-value-refused", "error", "the engine refuses this value (its argument parser or its start-up checks)",
    "Some `vllm serve` arguments take one of a fixed set of values (argparse `choices`), read from the pinned "
    "vLLM release's own parser into its manifest (`sncc/engines/vllm/data/<version>.json`): `--block-size` "
    "takes 1, 8, 16, 32, 64 or 128 in vLLM 0.11.0. A plan value outside the set is written to the launch files "
    "and `vllm serve` exits at once with \"argument --block-size: invalid choice\". Where the parser takes any "
    "value, the release may still refuse it at start-up (the adapter's `[[value_rules]]`, each with its source): "
    "vLLM 0.23.0 on CUDA takes any block size, but every attention backend's kernel block sizes are multiples "
    "of 16, so another one stops the engine with \"No valid attention backend found\". Use one of the values listed.",
    'kv_cache { block_size = 100 }',
    'kv_cache { block_size = 128 }')

ENGINE_VERSION_DEFAULT = _code(
    "SN4046", "engine-version-default", "info", "the plan names no engine release: sncc checks and builds it for its default pin",
    "An `engine \"<kind>\" { }` block without `version` is checked and built for the adapter's default pinned "
    "release (`default` in `sncc/engines/<engine>/data/pins.toml`): every release rule judges that release, and "
    "`manifest.json` records it (`engine_version`, `engine_version_note`). The default moves when sncc pins a "
    "newer release, so the same plan can then be judged and built differently. Write the release the servers "
    "run to keep it fixed.",
    'engine "vllm" {}',
    'engine "vllm" { version = "0.23.0" }')

CHIP_FACTS_MISSING = _code(
    "SN4080", "chip-facts-missing", "error", "the simulator needs a chip fact the catalog does not have",
    "The step-cost model needs the device's HBM capacity and bandwidth and a dense peak rate for the "
    "plan's compute type. The catalog (sncc/catalog/data/chips.toml) leaves a fact absent when no "
    "source gives it, and the simulator does not guess it: `sncc check` accepts the plan, `sncc "
    "simulate` refuses it with the list of missing facts. Add the fact with its source to the chip's "
    "entry, or plan for a chip the catalog describes (Ascend 950DT has no shipped-software bandwidth "
    "figure: the Atlas 350 card's 950PR does).",
    'hardware { chip = "ascend-950dt"  devices = 8 }', 'hardware { chip = "ascend-950pr"  devices = 8 }')

MEMORY_OUTSIDE_BUDGET = _code(
    "SN4081", "memory-outside-budget", "warning",
    "HBM left outside memory_utilization cannot hold what the engine allocates there",
    "The engine sizes its KV cache to `memory_utilization` × HBM and leaves the rest to what it "
    "allocates later or never profiles: the runtime context, and the graph-capture pool on engines "
    "that capture graphs after the KV cache is allocated (vllm-ascend's NPUWorker does not deduct "
    "it, vllm-ascend#8260; vLLM deducts its CUDA-graph estimate from 0.23.0). When HBM × (1 − "
    "utilization) is smaller than these, graph capture fails at start-up (ACL error 507015 or a "
    "CUDA out-of-memory during capture). Each figure comes from sncc/catalog/data/memory.toml "
    "[outside] with its source; the message lists them.",
    "hardware { memory_utilization = 0.995 }", "hardware { memory_utilization = 0.9 }")

ALL2ALL_BACKEND_NOT_A_CHOICE = _code(
    "SN4082", "all2all-backend-not-a-choice", "error", "the pinned vLLM release has no such MoE all-to-all backend",
    "vLLM picks the implementation of the expert-parallel dispatch and combine from `VLLM_ALL2ALL_BACKEND` "
    "(vLLM 0.9.0 and 0.11.0; from 0.23.0 the `--all2all-backend` argument). Each release accepts its own set "
    "(`sncc/engines/vllm/data/pins.toml [[all2all]]`, read from its `vllm/envs.py`): 0.9.0 takes `naive` or "
    "`pplx` and raises \"Unknown all2all backend\" for anything else; 0.11.0 adds the DeepEP kernels, "
    "`allgather_reducescatter` (its default) and `flashinfer_all2allv`, and raises ValueError for another "
    "value (a value for one release given to another is a known trap, vllm#27347). The simulator prices the "
    "backend the role runs; use one the release accepts.",
    'engine "vllm" { version = "0.11.0" }  env { VLLM_ALL2ALL_BACKEND = "deepep_ll" }',
    'engine "vllm" { version = "0.11.0" }  env { VLLM_ALL2ALL_BACKEND = "deepep_low_latency" }')

VALUE_NOT_IN_RELEASE = _code(
    "SN4020", "value-not-in-release", "error", "a setting's value does not exist in the engine release (or is refused for this model)",
    "Every enum value sncc writes must exist in the pinned release: a speculative method (`dflash` from vLLM "
    "0.21; vllm-ascend's v0.19.1rc1 image fails with it, vllm-ascend#8819), a cudagraph mode (vLLM 0.11+), a KV "
    "connector class, a checkpoint quantization method on the platform (vllm-ascend accepts "
    "`compressed-tensors` from v0.12.0rc1, `fp8` from v0.21.0rc1). Some values exist but are refused for a "
    "model family: vllm-ascend refuses `cudagraph_mode FULL` for Qwen3.5 (vllm-ascend#11947), and v0.12.0rc1 "
    "and v0.13.0rc1 cannot capture full graphs of a non-MLA model with MTP (vllm-ascend#6085). A release "
    "between the last one known without the value and the first known with it is a warning (not verified). "
    "The tables are `engine_rules.toml [[release_support]]` and `[[release_exceptions]]`.",
    'engine "vllm-ascend" { version = "v0.19.1rc1" }  speculative { method = dflash  model = "/data/dflash" }',
    'engine "vllm-ascend" { version = "v0.23.0" }  speculative { method = dflash  model = "/data/dflash" }')
SOFTWARE_SET_MISMATCH = _code(
    "SN4021", "software-set-mismatch", "error", "the Ascend stack (HDK driver, NNAL, CANN) is not a compatible set",
    "A working Ascend stack is one set: the HDK driver and firmware the CANN release notes list, CANN, NNAL "
    "(libatb.so) of the same version as CANN, and the torch / torch_npu / vLLM the engine release pins. "
    "CANN 8.3 with driver 24.1 times out in the HCCL watchdog (vllm-ascend#5468); firmware 25.2.2 with CANN "
    "9.0.0 fails profiling (vllm-ascend#15411). With `software { install_path }` the installed version files "
    "are read and compared with what the plan declares.",
    'hardware { cann = "8.3.RC2" }  software { hdk = "24.1.0" }', 'hardware { cann = "8.2.RC2" }  software { hdk = "24.1.0" }')
LOADED_CHECKPOINT_FORMAT = _code(
    "SN4022", "loaded-checkpoint-not-quant", "warning", "without `weights`, the servers load a repository whose checkpoint is not the plan's `quant`",
    "A plan without `model { weights }` launches the catalog model's Hugging Face repository (`vllm serve "
    "deepseek-ai/DeepSeek-V3`). That repository holds the publisher's checkpoint (FP8 for DeepSeek, BF16 for "
    "Qwen3), not the W8A8 or W4A8 weights an Ascend plan quantizes to: vllm-ascend needs msModelSlim's "
    "output (with `quant_model_description.json`) for those, and the original FP8 checkpoint fails on A2/A3 "
    "(vllm-ascend#119, #3197). Point `weights` at the quantized checkpoint the servers should load; sncc "
    "then reads its quantization (SN4001).",
    'model "deepseek-v3" { quant = w8a8 }', 'model "deepseek-v3" { quant = w8a8  weights = "/models/DeepSeek-V3-w8a8" }')
MODEL_NOT_IN_RELEASE = _code(
    "SN4023", "model-not-in-release", "error", "the engine release cannot load the model's architecture",
    "Each engine release loads only the model architectures it has a model class for; an older one stops at "
    "start-up (\"Model architectures ['Qwen3_5MoeForConditionalGeneration'] are not supported for now\"). "
    "The first release per engine of each architecture (`model_type`) is `engine_rules.toml "
    "[[model_support]]`, from the release notes and recipes: DeepSeek-V4 from vllm-ascend v0.20.2rc1 "
    "(v0.21.0rc1 on Ascend 950) and vLLM 0.20.0, Qwen3.5 from vllm-ascend v0.17.0rc1 and vLLM 0.17.0. "
    "An unversioned engine is judged as sncc's default pin, the release the build writes files for. An "
    "architecture without a row has no known minimum and draws nothing.",
    'model "deepseek-v4-flash" {}  engine "vllm-ascend" { version = "v0.11.0" }',
    'model "deepseek-v4-flash" {}  engine "vllm-ascend" { version = "v0.23.0" }')
# --- SN5xxx scheduler and context -----------------------------------------
CHUNK_EXCEEDS_BUDGET = _code(
    "SN5001", "chunk-exceeds-batch-tokens", "error", "chunked_prefill is larger than max_num_batched_tokens",
    "A prefill chunk must fit in one step's token budget.",
    "prefill { max_num_batched_tokens = 8k  chunked_prefill = 16k }",
    "prefill { max_num_batched_tokens = 32k  chunked_prefill = 16k }")
BUDGET_BELOW_CONTEXT = _code(
    "SN5002", "batch-tokens-below-max-model-len", "error",
    "with chunked prefill off, max_num_batched_tokens is smaller than max_model_len",
    "Without chunked prefill a whole prompt must fit in one step. vLLM raises `max_num_batched_tokens "
    "(X) is smaller than max_model_len (Y)` at start-up.",
    "serve { max_num_batched_tokens = 4k }  # max_model_len 32k", "serve { max_num_batched_tokens = 4k  chunked_prefill = 4k }")
CONTEXT_EXCEEDS_MODEL = _code(
    "SN5003", "max-model-len-exceeds-position", "error", "max_model_len exceeds the model's maximum position",
    "`max_model_len` (max input + max output unless set) must not exceed the model's "
    "`max_position_embeddings`.",
    "workload { input { max = 128k }  output { max = 64k } }  # 163,840 positions",
    "workload { input { max = 96k }  output { max = 32k } }")
MAX_TOKENS_EXCEEDS_MODEL = _code(
    "SN5004", "max-tokens-exceeds-model-output", "error", "the client's max_tokens exceeds the model's maximum output",
    "A request whose `max_tokens` exceeds what the model may generate is rejected (seed 000: "
    "DeepSeek-R1 outputs at most 32k).",
    "gateway { max_tokens = 128k }", "gateway { max_tokens = 32k }")
MAX_NUM_SEQS_OVER_BUDGET = _code(
    "SN5005", "max-num-seqs-over-batch-tokens", "error", "max_num_seqs exceeds max_num_batched_tokens",
    "vLLM requires `max_num_batched_tokens >= max_num_seqs`.",
    "decode { max_num_seqs = 512  max_num_batched_tokens = 256 }", "decode { max_num_seqs = 256  max_num_batched_tokens = 256 }")

CAPTURE_GRID_MISS = _code(
    "SN5006", "batch-off-capture-grid", "warning", "the largest decode batch is not a captured graph size",
    "With graph mode, decode steps whose token count has no captured graph run eagerly (or pad to "
    "the next size). vLLM/vllm-ascend capture 1, 2, 4 and multiples of 8 by default and drop sizes "
    "above `max_num_seqs × (1 + draft_tokens)`: a `max_num_seqs` of 12 leaves batches 9–12 eager, "
    "~7.5× slower (vllm-ascend#16049). Use a size on the grid or list it in `graph.capture_sizes`.",
    'decode { max_num_seqs = 12 }', 'decode { max_num_seqs = 16 }')
DECODE_GEARS_INVALID = _code(
    "SN5007", "decode-gear-list-invalid", "error", "Omni-Infer's decode_gear_list breaks its rules",
    "Omni-Infer compiles one decode graph per gear: at most 6 gears (`ValueError: Max gear num "
    "supported is 6 now.`), and the largest must be `max_num_seqs × (1 + draft_tokens)` (Omni-Infer "
    "drops larger gears and appends the max batch; a missing max gear is a warning).",
    'graph { decode_gears = [1, 2, 4, 8, 16, 32, 64] }', 'graph { decode_gears = [8, 16, 32, 64] }')

WORKLOAD_EXCEEDS_CONTEXT = _code(
    "SN5008", "workload-exceeds-max-model-len", "error", "the workload's longest request does not fit in max_model_len",
    "vLLM rejects a request whose prompt plus `max_tokens` exceeds `max_model_len` (HTTP 400, \"This "
    "model's maximum context length is …\"). With `max_model_len` set explicitly, the workload's max "
    "input plus the client's max_tokens must fit in it.",
    "model \"qwen3-32b\" { max_model_len = 32k }  workload { input { max = 32k } output { max = 4k } }",
    "model \"qwen3-32b\" { max_model_len = 36k }  workload { input { max = 32k } output { max = 4k } }")
CONVERSATION_EXCEEDS_CONTEXT = _code(
    "SN5009", "conversation-exceeds-max-model-len", "warning",
    "a multi-turn conversation grows past max_model_len",
    "Each follow-up turn's prompt holds the conversation so far (the previous prompts and replies) "
    "plus a new message, so a conversation of `turns` turns ends near turns × (input mean + output "
    "mean) tokens. Past `max_model_len` (or the model's positions) vLLM rejects the request (HTTP "
    "400, \"This model's maximum context length is …\"). `sncc simulate` caps every follow-up "
    "prompt at the workload's input `max` and says how many it capped, so the simulated "
    "conversation is shorter than the one written. Lower `turns`, or raise `max_model_len` and the "
    "input `max` to hold the whole conversation.",
    "workload { turns = 30  input { mean = 2k  max = 8k }  output { mean = 256  max = 1k } }",
    "workload { turns = 3  input { mean = 2k  max = 8k }  output { mean = 256  max = 1k } }")
SIMULATION_STEP_BOUND = _code(
    "SN5080", "simulation-step-bound", "error", "the simulation exceeded its bound on engine steps",
    "`sncc simulate` steps the engines one iteration at a time. A run stops instead of running for "
    "minutes when it needs more engine events than two per output token plus eight per request "
    "(at least 200,000; identical decode steps are simulated in one event), or more prefill chunks "
    "than one per 128 prompt tokens plus eight per request: a plan whose steps are tiny for its "
    "workload (a `chunked_prefill` of a few tokens for multi-thousand-token prompts, say). The "
    "message says how many requests had completed. Use a chunk size near the engine's default, or "
    "fewer `requests`.",
    "serve { chunked_prefill = 1 }", "serve { chunked_prefill = 4k }")
TRACE_REQUESTS_DIFFER = _code(
    "SN5081", "trace-requests-differ", "info", "`requests` is not the workload trace's row count",
    "A workload trace is replayed one request per row, and without `requests` a run sends exactly "
    "the trace's rows. A written `requests` is honoured: fewer than the rows replays the first "
    "`requests` rows, more cycles the rows (arrival times shifted by the trace's span). That is "
    "useful (a quick preview of a long trace, a short trace repeated until the run reaches a steady "
    "state) but easy to do by accident, so it is said here. Remove `requests` to replay each row once.",
    'workload { requests = 1000  trace = "two-rows.csv" }', 'workload { trace = "two-rows.csv" }')
TRACE_LENGTHS_DISAGREE = _code(
    "SN5082", "trace-lengths-disagree", "warning", "the `input`/`output` mean is not the workload trace's: bench.sh would send other lengths than the simulation replays",
    "A workload trace gives every request's input and output length, so `sncc simulate` (and `sncc "
    "search`) draw no lengths from the `input` and `output` blocks. Those blocks are still used: their "
    "`max` bounds every trace row (SN2015) and sets the default `max_model_len` and the client's "
    "`max_tokens`, and their `mean`, `min` and `dist` are what `bench.sh` sends, since `vllm bench "
    "serve`'s random dataset does not replay the trace. A `mean` more than 10 % away from the "
    "trace's mean length would have the benchmark measure another workload than the one simulated. "
    "Write the trace's mean lengths (the message gives them).",
    'workload { trace = "t.csv"  input { mean = 8k  max = 16k }  output { mean = 2k  max = 4k } }\n'
    '# t.csv: prompts of about 1k tokens, replies of about 200',
    'workload { trace = "t.csv"  input { mean = 1k  max = 16k }  output { mean = 200  max = 4k } }')
BENCH_WORKLOAD_DIFFERS = _code(
    "SN5084", "bench-workload-differs", "warning", "bench.sh cannot reproduce part of the workload the simulation runs",
    "`bench.sh` runs `vllm bench serve` with its random dataset: independent single-turn prompts of "
    "random tokens, each sent as soon as a client is free. `sncc simulate` models what the plan says: "
    "`workload { turns }` conversations whose prompts grow turn by turn, a `think_time` between turns, "
    "and `optimize { prefix_cache_hit }` prompt tokens served from the prefix cache. The benchmark "
    "then measures another workload than the one simulated (shorter prompts, no pauses, no cache "
    "hits), and a calibration from it fits other numbers. The warning is at each key the benchmark "
    "does not reproduce; `bench.sh`'s header says the same. Compare such a plan with a multi-turn "
    "benchmark of your own, or simulate the single-turn workload the benchmark sends.",
    "workload { turns = 3  think_time = 2s ... }  optimize { prefix_cache_hit = 50% }",
    "workload { ... }  # single-turn, no prefix reuse: what bench.sh sends")
NOT_SIMULABLE = _code(
    "SN5083", "plan-not-simulable", "error", "the simulator cannot model the plan",
    "`sncc simulate` and `sncc search` build a cost model of every role from the plan and its model's "
    "architecture. A plan can pass `sncc check` and still hold a combination that model refuses, "
    "nearly always because a suppression comment hid the error that says so (a `tp` that splits "
    "neither the KV heads nor is split by them, SN3004; a workload `mean` above its `max`, SN2009). "
    "The simulator's reason is reported at the suppressed error it most likely comes from (else at "
    "the plan) instead of an internal error; fix the plan, or remove the suppression and read the "
    "error `sncc check` gives.",
    "# sncc: ignore[SN2009] testing\nworkload { input { mean = 4k  max = 2k } }",
    "workload { input { mean = 1k  max = 2k } }")

ENGINE_DEFAULT_LENGTH = _code(
    "SN5020", "engine-default-length-over-platform-limit", "warning", "max_model_len is left to the engine's default, above what the platform is known to start with",
    "With `max_model_len = auto` the engine derives the length from config.json (262,144 for Qwen3-VL-30B-A3B "
    "and the Qwen3 2507 models). vLLM's platform ceiling hook runs only on that default path, and vllm-ascend "
    "never overrides it: on Ascend a default above 65,536 hangs after distributed init (vllm-ascend#3795) or "
    "exhausts host memory at start-up (vllm-ascend#3314). Write the length the workload needs; written values "
    "are not compared with this limit (working deployments write 133,120 and 262,144 on A2).",
    'model "qwen3-30b-a3b-2507" { max_model_len = auto }', 'model "qwen3-30b-a3b-2507" { max_model_len = 64k }')
DRAFT_WINDOW_TOO_SHORT = _code(
    "SN5021", "draft-window-below-max-model-len", "error", "the separate draft model's positions do not cover max_model_len",
    "vLLM caps a draft model at `min(draft, target)` positions and only logs it; requests longer than the "
    "draft's window are still speculated and index past its rotary table: `CUDA error: an illegal memory "
    "access` kills the engine (vllm#57941) or longer prompts crash (vllm#22935). The draft's window is its "
    "config.json `max_position_embeddings` × its own rope scaling; the target's `--hf-overrides` is not applied "
    "to it.",
    'model "qwen3-32b" { max_model_len = 32k }  speculative { method = eagle3  model = "./eagle3-2k" }',
    'model "qwen3-32b" { max_model_len = 2k }  speculative { method = eagle3  model = "./eagle3-2k" }')
DRAFT_ROPE_NOT_INHERITED = _code(
    "SN5022", "draft-rope-not-inherited", "error", "the draft does not get the target's rope scaling",
    "A rope extension given to the target through `--hf-overrides` (`model { rope_scaling }`) does not reach "
    "the draft: vLLM loads the draft's config with its own overrides only. An MTP draft then keeps the native "
    "window; past it every draft is a dummy and acceptance falls to almost nothing (vllm#58080). A separate "
    "draft without the target's rope type gets wrong positions at long context and lower acceptance "
    "(vllm-project/speculators#574). An error when `max_model_len` exceeds the draft's window, a warning "
    "otherwise. Bake the rope block into the checkpoint's config.json instead.",
    'model "qwen3.5-397b" { rope_scaling = 4  max_model_len = 1000000 }  speculative { method = mtp }',
    'model "qwen3.5-397b" { rope_scaling = 4  max_model_len = 1000000 }  # MTP off, or the rope block in config.json')

PREFIX_CACHE_HIT_WITHOUT_CACHING = _code(
    "SN5023", "prefix-cache-hit-without-prefix-caching", "error",
    "`optimize { prefix_cache_hit }` credits cache hits to a role that runs without prefix caching",
    "`optimize { prefix_cache_hit }` is the fraction of prompt tokens the simulator serves from the prefix "
    "cache instead of computing them (with `workload { turns > 1 }`, the chance a follow-up turn finds its "
    "conversation's context still cached). Automatic prefix caching is what lets a request skip computing a "
    "prefix an earlier request left in the KV cache (vLLM docs, \"Automatic Prefix Caching\"); a role that "
    "computes prompts (`prefill`, or `serve`) with it off (`prefix_caching = false`, vLLM "
    "`--no-enable-prefix-caching`) recomputes every prompt token, so the simulated TTFT and throughput "
    "describe an engine that cannot exist. The role is also off where the engine turns prefix caching off "
    "itself: Omni-Infer release_v0.3.0 runs OmniAttn's KV consumers (a `serve` role with "
    "`optimize { omni_attn }`) with a KV cache manager that has no prefix caching. A P/D `decode` role "
    "receives its prompts as KV and computes none, so its switch is free. Turn prefix caching on (or leave "
    "`prefix_caching` out: vLLM V1 turns it on by default), or set `prefix_cache_hit = 0`.",
    "serve { prefix_caching = false ... }  optimize { prefix_cache_hit = 50% }",
    "serve { prefix_caching = true ... }  optimize { prefix_cache_hit = 50% }")
# --- SN6xxx gateway ----------------------------------------------------------
GATEWAY_MODEL_MISMATCH = _code(
    "SN6001", "gateway-model-mismatch", "error", "the gateway's model_id is not the served model name",
    "Requests name the model; a name the server does not serve returns `model not found`.",
    'model "deepseek-r1" {} gateway { model_id = "deepseek-v3" }', 'model "deepseek-r1" {} gateway { model_id = "deepseek-r1" }')
GATEWAY_TIMEOUT_SHORT = _code(
    "SN6002", "gateway-timeout-too-short", "error", "the gateway timeout is shorter than the longest generation",
    "The gateway must wait at least for the worst-case request: TTFT target + max output tokens × "
    "TPOT target. Without a TPOT target, max output tokens × the batch-1 TPOT floor (every weight "
    "read from HBM once per token) is a lower bound; an e2e target above that bounds it too. "
    "Shorter timeouts cut long generations off mid-stream.",
    "gateway { timeout = 120s }  # 32k tokens × 50 ms", "gateway { timeout = 30min }")

PROXY_TIMEOUT = _code(
    "SN6003", "proxy-timeout-unbounded-or-misordered", "error", "a proxy timeout is unbounded or shorter than the hop it guards",
    "Every hop needs a finite timeout, in order: client total (`gateway.timeout`) ≥ proxy read "
    "timeout ≥ the longest silent gap (TTFT for streaming; TTFT + max_tokens × TPOT without "
    "streaming). An unbounded read holds prefill/decode capacity forever when an upstream stalls "
    "(vllm-ascend#14371); a short one cuts long generations (basetenlabs/truss#670).",
    'proxy { read_timeout = none }', 'proxy { connect_timeout = 10s  read_timeout = 300s }')

READY_TIMEOUT_SHORT = _code(
    "SN6020", "ready-timeout-below-startup", "warning", "the readiness bound is shorter than loading the weights and warming up",
    "The API server waits `VLLM_ENGINE_READY_TIMEOUT_S` (600 s by default; hard-coded before vLLM 0.14.1) for "
    "the engine cores, and orchestrators probe health with their own bound. Start-up takes at least the "
    "checkpoint bytes one node reads ÷ the storage bandwidth, plus warm-up (DeepGEMM: 10+ minutes, vllm#27444): "
    "\"Timed out waiting for engines to send initial message\" at 105 of 163 shards (vllm#35547). An error "
    "when the plan states both the bandwidth (`hardware.storage_bandwidth`) and the bound "
    "(`engine.ready_timeout` or `VLLM_ENGINE_READY_TIMEOUT_S`), a warning when it states one of them.",
    'engine "vllm" { ready_timeout = 10min }  hardware { storage_bandwidth = 800MB/s }  # 690 GB per node',
    'engine "vllm" { ready_timeout = 30min }  hardware { storage_bandwidth = 800MB/s }')

# --- SN7xxx SLO feasibility ---------------------------------------------------
TPOT_UNREACHABLE = _code(
    "SN7001", "tpot-unreachable", "error", "the TPOT target is below one decode step at batch 1",
    "Each decode step reads at least the weights held by one device once; at full HBM bandwidth "
    "that time bounds TPOT from below even at batch 1.",
    "slo { tpot < 2ms }", "slo { tpot < 50ms }")

SPECULATIVE_SLOWDOWN = _code(
    "SN7002", "speculative-decoding-slows-decode", "warning", "speculative decoding is predicted to slow decoding down",
    "Speculation pays when the expected tokens per step, `E = (1 − α^(k+1)) / (1 − α)`, outweigh the "
    "longer step: `t_verify(k+1 tokens) + k × t_draft`. With a low acceptance α or an expensive "
    "draft the ratio `E × t_target / step` drops below 1 (vllm-ascend#12890: α ≈ 0.4, TPOT 45 → 60 ms).",
    'speculative { method = draft_model  draft_tokens = 4  acceptance = 0.4  draft_cost = 0.3 }',
    'speculative { method = mtp  draft_tokens = 1  acceptance = 0.8 }')

SLO_TARGET_IMPLAUSIBLE = _code(
    "SN7060", "slo-target-implausible", "warning", "an SLO target below any physically meaningful value",
    "A latency target smaller than any deployment can reach is nearly always a slip of the unit "
    "(`ttft < 0.0000001ms` for `100ms`): the simulator would report every request missing it. sncc "
    "warns below `min_ttft_s` for `ttft`, `engine_ttft` and `e2e` and below `min_tpot_s` for `tpot`; "
    "both bounds, each with its reason, are in `sncc/catalog/data/limits.toml [slo]` with their sources, "
    "and the message prints them. A TPOT target below the plan's own batch-1 floor is the error SN7001 "
    "instead.",
    "slo { ttft < 0.0000001ms }", "slo { ttft < 100ms }")

# --- SN80xx import (`sncc import`: diagnostics located in the launch script) -------------------
IMPORT_UNKNOWN_ARGUMENT = _code(
    "SN8001", "import-unknown-argument", "error", "an engine argument the pinned release does not accept",
    "`sncc import` reads the `vllm serve` options of the pinned release from its manifest "
    "(`sncc/engines/vllm/data/<version>.json`, extracted from the release's own parser). An option that "
    "is not there, under any spelling (`--x`, `--x=v`, an alias, the `--no-x` form), makes vLLM exit "
    "with `unrecognized arguments`; a close spelling is suggested.",
    "vllm serve m --tensor-paralel-size 8", "vllm serve m --tensor-parallel-size 8")
IMPORT_UNREAD_VARIABLE = _code(
    "SN8002", "import-unread-variable", "warning", "an exported variable no engine or runtime library reads",
    "The variable is in no manifest of the engine, of the vLLM it runs, or of `sncc/engines/cann_env.json` "
    "(CANN, HCCL, NCCL, torch_npu, gloo). Setting it changes nothing; it is often a typo or a setting from "
    "another release (an older release sncc has a manifest for that read it is named: `VLLM_RPC_TIMEOUT`, "
    "last read by vLLM 0.11.0). It is kept in the plan's `env { }`.",
    "export VLLM_USE_V2=1", "export VLLM_USE_V1=1")
IMPORT_DEFAULT_MAX_MODEL_LEN = _code(
    "SN8003", "import-default-max-model-len", "warning", "the command sets no max_model_len: the engine derives it",
    "Without `--max-model-len` vLLM takes the model's `max_position_embeddings` (times a rope factor) from "
    "config.json, which for long-context models is far more than the KV cache holds at `max_num_seqs`. "
    "The imported plan says `max_model_len = auto` so that the checks use the engine's value; state the "
    "length you serve.",
    "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 4", "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 4 --max-model-len 32768")
IMPORT_UNREPRESENTED = _code(
    "SN8004", "import-unrepresented", "warning", "an engine argument sncc has no plan key for",
    "The option exists in the release but the plan language has no key for it (or its value is one sncc "
    "does not model). It is kept in the imported plan as a comment, so that the choice is not lost silently; "
    "`sncc build` does not write it.",
    "vllm serve m --swap-space 16", "(the plan keeps `# --swap-space 16` as a comment)")
IMPORT_UNRESOLVED = _code(
    "SN8005", "import-unresolved-value", "warning", "a value the importer cannot know without running the script",
    "The importer never executes the script: `$VAR` with no assignment before it, `$(command)`, and "
    "placeholders such as `<port>` are left as written. A value that needs them is not imported.",
    "vllm serve m --tensor-parallel-size $TP", "TP=8\nvllm serve m --tensor-parallel-size $TP")
IMPORT_NO_ENGINE_COMMAND = _code(
    "SN8006", "import-no-engine-command", "error", "the file holds no engine command",
    "`sncc import` looks for `vllm serve ...` or `python -m vllm.entrypoints.openai.api_server ...` "
    "(after `export`s and variable assignments, across line continuations).",
    "python serve.py", "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 4")
IMPORT_CONDITIONAL = _code(
    "SN8007", "import-conditional", "warning", "a shell conditional the importer does not evaluate",
    "`if` / `case` / `&&` chains choose at run time. The importer applies the assignments of every branch in "
    "order (the last one wins) and says so here; check that the imported values are the branch you deploy.",
    "if [ $CC = 10.0 ]; then DTYPE=FP4; else DTYPE=FP8; fi", "DTYPE=FP8")
IMPORT_ASSUMED = _code(
    "SN8008", "import-assumed", "info", "a plan value the script does not state, assumed by the importer",
    "A launch command names no hardware system (and often no engine release). The importer assumes one, "
    "says which, and how to choose another (`sncc import --system ... --engine-version ...`).",
    "vllm serve m", "sncc import run.sh --system hgx-h200 --engine-version 0.11.0")
IMPORT_BAD_VALUE = _code(
    "SN8009", "import-bad-value", "error", "an engine argument's value the release would refuse",
    "The value does not parse as the option's type, is not one of its choices, or a JSON option holds "
    "invalid JSON (the manifest's `type` / `choices`).",
    "vllm serve m --tensor-parallel-size eight", "vllm serve m --tensor-parallel-size 8")
IMPORT_MORE_COMMANDS = _code(
    "SN8010", "import-more-commands", "warning", "more engine commands than the importer merges",
    "Several `vllm serve` commands (nodes of one multi-node deployment, P/D roles) are not merged into one "
    "plan yet: the first is imported and the others are named here.",
    "vllm serve m ... & vllm serve m ...", "(import one command per file)")
IMPORT_NODE_DIFFERS = _code(
    "SN8011", "import-node-differs", "warning", "the nodes of one data-parallel instance are started differently",
    "The commands of a multi-node data-parallel instance (node 0 serving the API, the others `--headless` with "
    "their `--data-parallel-start-rank`) are merged into one role; an argument other than the per-node ones "
    "(addresses, ports, ranks) that differs between them has no single plan value, and vLLM would run the "
    "nodes' engine cores with different settings.",
    "node0: --max-num-seqs 16   node1: --headless --max-num-seqs 32", "both: --max-num-seqs 16")
IMPORT_REPEATED_OPTION = _code(
    "SN8012", "import-repeated-option", "warning", "an option given twice in a vLLM --config file",
    "A YAML mapping that repeats a key (`max-num-seqs: 64` and later `max-num-seqs: 256`) is loaded by "
    "vLLM's --config reader (PyYAML) without complaint: the last value wins and the first is silently "
    "dropped. The importer takes the last value, as vLLM does, and reports the repeat at its second key.",
    "max-num-seqs: 64\nmax-num-seqs: 256", "max-num-seqs: 256")
IMPORT_SECRET_NOT_COPIED = _code(
    "SN8013", "import-secret-not-copied", "warning", "a credential in the script, not copied into the plan",
    "A value shaped like a credential (a Hugging Face, OpenAI-style, GitHub, AWS or Slack token, a private "
    "key, a URL with a password: the shapes SN2007 refuses in a plan, sncc/diagnostics/secrets.py) is never "
    "written into the imported plan. An `env` variable is left out (a commented line names it): export it in "
    "the shell that starts the servers, where the launch scripts inherit it. An engine argument holding one "
    "is kept as a comment without its value.",
    "export HF_TOKEN=hf_...\nvllm serve m", "export HF_TOKEN in the serving shell; the plan has no HF_TOKEN")
IMPORT_QUANT_UNDECIDED = _code(
    "SN8014", "import-quant-undecided", "warning", "a `--quantization` value that does not say the weight format",
    "Some `--quantization` values name a checkpoint format, not a weight format: on CUDA vLLM "
    "`compressed-tensors` (llm-compressor's output) holds INT8 W8A8, FP8, W8A16, W4A16 or INT4-expert "
    "weights alike, and the checkpoint's config.json `quantization_config` says which (the engine adapter's "
    "`[quantization.checkpoint_formats]`, `sncc/engines/<engine>/data/pins.toml`). When the model argument "
    "is a local checkpoint folder the importer reads its config.json and takes the format from there; "
    "otherwise `quant` is left unset (`# quant = ?`) rather than guessed, since the format sets the weight "
    "footprint the memory checks use.",
    "vllm serve RedHatAI/Qwen3-32B-quantized.w8a8 --quantization compressed-tensors",
    'model "qwen3-32b" { quant = w8a8 }  (written by hand after the import)')
IMPORT_UNREAD_LINE = _code(
    "SN8015", "import-unread-line", "error", "a line of options cut off the engine command above it",
    "A line that starts with an option (`--max-num-seqs 64`) is a command of its own when the line before "
    "does not continue: it ends without `\\`, or with `\\` followed by spaces or tabs (the backslash then "
    "escapes the space, not the line break). The shell starts the engine without those options and then "
    "fails on the line (`command not found`); the importer reads the script as the shell does, so the "
    "options are not imported, and says so here at the cut-off line. (Windows CRLF and old Mac CR line "
    "endings are read as line breaks: a `\\` before them continues the line.)",
    "vllm serve m \\   \n  --max-num-seqs 64", "vllm serve m \\\n  --max-num-seqs 64")
IMPORT_INVALID_NAME = _code(
    "SN8016", "import-invalid-variable-name", "warning", "an `export` of a name bash refuses: the variable is not set",
    "A shell variable's name is letters, digits and underscores, not starting with a digit (GNU Bash "
    "manual, \"Definitions\": name). `export HCCL-BUFFSIZE=200` (a hyphen) is refused by bash with "
    "`export: 'HCCL-BUFFSIZE=200': not a valid identifier`; the script goes on, and neither that name nor "
    "the one meant (`HCCL_BUFFSIZE`) is set, so the engine and the runtime libraries run with their "
    "default. The importer reads the script as bash does: nothing enters the plan's `env`, and this "
    "warning names the word (also for `readonly`, `declare` and `local`).",
    "export HCCL-BUFFSIZE=200", "export HCCL_BUFFSIZE=200")
IMPORT_HOST_ENV_NOT_PASSED = _code(
    "SN8017", "import-host-env-not-in-container", "warning",
    "a variable exported on the host that the container of a `docker run` engine command does not get",
    "A container's environment is what `docker run` passes it: `-e NAME=value`, `-e NAME` (the host's "
    "value of NAME) and `--env-file` (Docker's `docker container run` reference, \"Set environment "
    "variables\"). An `export NAME=value` in the script before `docker run` sets it for the docker client "
    "only, so an engine or runtime variable exported there never reaches the server. The importer reads "
    "the container's environment as docker does: the export does not enter the plan's `env`, and this "
    "warning names it (variables no engine or runtime library reads are not reported).",
    "export HCCL_BUFFSIZE=512\ndocker run IMAGE vllm serve MODEL",
    "export HCCL_BUFFSIZE=512\ndocker run -e HCCL_BUFFSIZE IMAGE vllm serve MODEL")

# --- SN81xx search (`sncc search`: diagnostics located in the plan's `search { }` block) ------------
SEARCH_EMPTY_SPACE = _code(
    "SN8101", "search-empty-space", "error", "the search space holds no candidate",
    "Every combination of the `search { }` lists (or the flags that override them) was ruled out by "
    "construction, and the message says which rule and which values: a tensor-parallel size "
    "that does not divide the attention heads, an expert-parallel group that does not divide the routed "
    "experts, a layout larger than the device budget, or weights that do not fit the device's HBM at any "
    "tensor/data-parallel size listed (the memory model of `sncc check`, sncc/capacity.py); every "
    "`chunked_prefill` listed larger than every `max_num_batched_tokens` listed (a prefill chunk cannot "
    "exceed the step's token budget, e.g. `--max-num-batched-tokens 100` under the plan's `chunked_prefill = 8k`); "
    "or instance counts whose fewest instances of the smallest layouts need more devices than the budget.",
    "search { tp = [3]  devices = 8 }", "search { tp = [1, 2, 4, 8]  devices = 8 }")
SEARCH_VALUE_DROPPED = _code(
    "SN8102", "search-value-dropped", "warning", "a listed search value can never form a valid layout",
    "The value is skipped: e.g. a tensor-parallel size that does not divide the model's attention heads "
    "(vLLM refuses `--tensor-parallel-size` that does not divide `num_attention_heads`), a size above the "
    "device budget, or a chunk larger than the step's token budget.",
    "search { tp = [1, 2, 3, 4] }", "search { tp = [1, 2, 4] }")
SEARCH_BUDGET_EXCEEDS_HARDWARE = _code(
    "SN8103", "search-budget-exceeds-hardware", "error", "the search's device budget is larger than the plan's hardware",
    "`search { devices = N }` is a budget within the plan's `hardware`: a written plan keeps the hardware "
    "block, and `sncc check` refuses a plan that uses more devices than it has (SN3002).",
    "hardware { nodes = 2 }  search { devices = 64 }   # 2 x 16 = 32 devices", "hardware { nodes = 4 }  search { devices = 64 }")
SEARCH_SPECULATIVE_WITHOUT_BLOCK = _code(
    "SN8104", "search-speculative-without-block", "error", "`speculative = both` without the plan's speculative block",
    "Trying speculative decoding on needs its method, draft tokens and measured acceptance rate, which "
    "only the plan's `speculative { }` block gives.",
    "search { speculative = both }", "speculative { method = mtp  draft_tokens = 1  acceptance = 0.8 }\nsearch { speculative = both }")
SEARCH_NO_PLAN_MEETS_SLO = _code(
    "SN8105", "search-no-plan-meets-slo", "warning", "no candidate is predicted to meet every SLO",
    "Every candidate the search ranked misses an SLO (or its calibration interval straddles one). The "
    "table lists the closest candidates; loosen the SLO, enlarge the budget or widen the space.",
    "slo { ttft < 10ms }", "slo { ttft < 2s }")

# --- SN9xxx internal -----------------------------------------------------------
INTERNAL_ERROR = _code(
    "SN9001", "internal-error", "error", "sncc failed internally",
    "A bug in sncc. The message names the exception; please report it with the plan.",
    "(any plan)", "(any plan)")
