"""Helpers importable from tests in sub-folders (``from tests_helpers import ...``)."""

from __future__ import annotations


def compile_plan(text: str, name: str = "plan.sn"):
    """Compile ``text`` (every phase on demand) as :class:`sncc.compiler.Compilation`."""
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    return compile_file(SourceFile(name, text))


#: Qwen3-32B BF16 served aggregated on one Atlas 800 A2 node (4 instances x TP2), the plan of a
#: user's break test that several tests vary (`sncc fmt --check` clean)
QWEN3_32B_A2 = """\
plan "qwen3-32b-a2" {
  model "qwen3-32b" { quant = bf16 }
  hardware { system = "atlas-800-a2"  nodes = 1 }
  engine "vllm-ascend" { version = "v0.11.0" }
  serve {
    instances = 4
    devices = 2
    tp = 2
    max_num_seqs = 64
    max_num_batched_tokens = 16k
    chunked_prefill = 8k
  }
  workload {
    requests = 2000
    concurrency = 128
    input { mean = 2k  max = 8k }
    output { mean = 512  max = 2k }
  }
  slo { ttft.p90 < 3s  tpot < 40ms }
}
"""


#: qwen3-32b INT8 W8A8 on H100: `sncc build` writes no --quantization (vLLM reads compressed-tensors from
#: the checkpoint's config.json), so the quant is kept in the build's manifest.json only
QWEN3_32B_W8A8_H100 = '''plan "q32-w8a8" {
  model "qwen3-32b" {
    quant = w8a8
    weights = "RedHatAI/Qwen3-32B-quantized.w8a8"
  }
  hardware { system = "hgx-h100"  devices = 4 }
  engine "vllm" { version = "0.23.0" }
  serve { devices = 4  tp = 4  max_num_seqs = 64  max_num_batched_tokens = 8k }
  workload {
    input { mean = 1k  max = 2k }
    output { mean = 128  max = 512 }
  }
}
'''
