"""Step cost model: per-operation rooflines by family and the registered cost terms.

Modules: ``roofline`` (the per-operation roofline), ``attention`` (MLA/GQA/DSA/V4 attention
cores), ``gemm`` (dense and MoE weight GEMMs), ``vector`` (elementwise work), ``comm`` (TP
all-reduce, EP dispatch/combine), ``kv_transfer`` (P->D KV transfer), ``terms`` (the registered
list of named cost terms, :data:`sncc.cost.terms.TERMS`) and ``step`` (:class:`StepModel`,
one role's step time as the sum of those terms).
"""
