"""The plan's env is the environment in force at the imported command: the exports before it in
its file and in the files it sources (`. "$SNCC_OUT/env/common.sh"`, as `sncc build`'s launch
scripts do), never those of a command that is not imported; such an export is named (SN8010 info)."""
from __future__ import annotations

from expect import compile_text

from sncc.importer import import_files, import_sources
from sncc.source import SourceFile

A = ("export HCCL_BUFFSIZE=200\nexport ASCEND_RT_VISIBLE_DEVICES=0,1,2,3\n"
     "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 4 --max-model-len 8192\n")
B = ("export HCCL_BUFFSIZE=512\nexport ASCEND_RT_VISIBLE_DEVICES=4,5,6,7\nexport OMP_NUM_THREADS=4\n"
     "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2 --max-model-len 4096 --port 8001\n")


def _notes(res):
    return [(d.span.file, res.sources[d.span.file].line_col(d.span.start)[0], d.severity)
            for d in res.diagnostics if d.code.code == "SN8010" and "environment" in d.message]


def test_exports_of_a_command_not_imported_stay_out_of_the_plan_env():
    """b.sh's HCCL_BUFFSIZE / ASCEND_RT_VISIBLE_DEVICES / OMP_NUM_THREADS replaced a.sh's."""
    res = import_sources([SourceFile("a.sh", A), SourceFile("b.sh", B)], engine="vllm-ascend")
    env = compile_text(res.text).plan.env
    assert env == {"HCCL_BUFFSIZE": "200", "ASCEND_RT_VISIBLE_DEVICES": "0,1,2,3"}, res.text
    assert _notes(res) == [("b.sh", 1, "info"), ("b.sh", 2, "info"), ("b.sh", 3, "info")]


def test_an_export_after_the_imported_command_is_not_its_environment():
    text = ("export HCCL_BUFFSIZE=200\n"
            "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 4 --max-model-len 8192 &\n"
            "export HCCL_BUFFSIZE=512\nexport HCCL_CONNECT_TIMEOUT=200\n"
            "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2 --max-model-len 4096 --port 8001 &\nwait\n")
    res = import_sources([SourceFile("ab.sh", text)], engine="vllm-ascend")
    assert compile_text(res.text).plan.env == {"HCCL_BUFFSIZE": "200"}, res.text
    assert _notes(res) == [("ab.sh", 3, "info"), ("ab.sh", 4, "info")]


def test_an_env_file_given_before_the_script_is_its_environment():
    res = import_sources([SourceFile("env.sh", "export HCCL_BUFFSIZE=300\n"), SourceFile("a.sh", A)],
                         engine="vllm-ascend")
    assert compile_text(res.text).plan.env["HCCL_BUFFSIZE"] == "200"
    assert not _notes(res)


def test_a_sourced_file_s_exports_are_read_where_it_is_sourced(tmp_path):
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "common.sh").write_text("export HCCL_BUFFSIZE=1536\nexport HCCL_CONNECT_TIMEOUT=3600\n",
                                                encoding="utf-8")
    run = tmp_path / "run.sh"
    run.write_text('HERE="$(dirname "$0")"\n. "$HERE/env/common.sh"\nsource ./missing.sh\n'
                   "export HCCL_CONNECT_TIMEOUT=1200\n"
                   "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 4 --max-model-len 8192\n", encoding="utf-8")
    res = import_files([str(run)], engine="vllm-ascend")
    assert compile_text(res.text).plan.env == {"HCCL_BUFFSIZE": "1536", "HCCL_CONNECT_TIMEOUT": "1200"}, res.text
    assert "HCCL_BUFFSIZE = \"1536\"  # from common.sh:1" in res.text
    missing = [d for d in res.diagnostics if d.code.code == "SN8005" and "sourced" in d.message]
    assert [(d.severity, res.sources[d.span.file].line_col(d.span.start)[0]) for d in missing] == [("warning", 3)]


def test_a_missing_file_sourced_under_its_own_file_test_is_not_a_warning(tmp_path):
    """The build's env/common.sh sources the CANN set_env.sh scripts under `if [ -f X ]; then . X`:
    on a machine without CANN every re-import warned twice (SN8005).  A guarded source of a
    missing file is the script's own business; an unguarded one still warns."""
    run = tmp_path / "run.sh"
    run.write_text("if [ -f /nonexistent/set_env.sh ]; then . /nonexistent/set_env.sh; fi\n"
                   "[ -r /nonexistent/b.sh ] && source /nonexistent/b.sh\n"
                   ". /nonexistent/c.sh\n"
                   "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 4\n", encoding="utf-8")
    res = import_files([str(run)], engine="vllm-ascend")
    missing = [d for d in res.diagnostics if d.code.code == "SN8005" and "sourced" in d.message]
    assert [res.sources[d.span.file].line_col(d.span.start)[0] for d in missing] == [3], missing


PLAN = '''plan "q32" {
  model "qwen3-32b" { weights = "/data/Qwen3-32B-W8A8"  quant = w8a8  max_model_len = 8k }
  hardware { system = "atlas-800-a2"  devices = 4 }
  engine "vllm-ascend" { version = "v0.23.0" }
  serve { devices = 4  tp = 4  max_num_seqs = 16  chunked_prefill = 8k }
  kv_cache { dtype = int8 }
  workload {
    input { mean = 1k  max = 2k }
    output { mean = 128  max = 512 }
  }
  env { HCCL_BUFFSIZE = 1536  HCCL_CONNECT_TIMEOUT = 3600 }
}
'''


def test_build_then_import_keeps_the_plan_env_and_the_kv_dtype(tmp_path):
    """The launch script sources env/common.sh, which the importer ignored: the env was lost; and
    serve.yaml says `kv-cache-dtype: auto` for an INT8 KV cache, which the manifest records."""
    from click.testing import CliRunner

    from sncc.cli import main

    (tmp_path / "plan.sn").write_text(PLAN, encoding="utf-8")
    got = CliRunner().invoke(main, ["build", str(tmp_path / "plan.sn"), "-o", str(tmp_path / "out")])
    assert got.exit_code == 0, got.output
    res = import_files([str(tmp_path / "out" / "launch" / "serve-0-node0.sh")])
    plan = compile_text(res.text).plan
    assert plan.env["HCCL_BUFFSIZE"] == "1536" and plan.env["HCCL_CONNECT_TIMEOUT"] == "3600", res.text
    assert plan.kv_cache.dtype == "int8", res.text
