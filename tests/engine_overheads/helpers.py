"""Data shared by the engine_overheads tests: shipped model configs and small builders.

Nothing here calls the implementation under test.
"""

from __future__ import annotations

from typing import Any

from graders.support.shipped import config

LLAMA8 = "meta-llama--Meta-Llama-3.1-8B"
MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
DENSE = [LLAMA8, "meta-llama--Llama-3.3-70B-Instruct", "meta-llama--Meta-Llama-3.1-405B",
         "Qwen--Qwen3-32B", "Qwen--Qwen3-8B", "Qwen--Qwen2.5-72B-Instruct", "Qwen--Qwen2.5-7B",
         "google--gemma-2-9b-it", "google--gemma-3-27b-it", "google--gemma-3-1b-it"]
MOE = ["Qwen--Qwen3-30B-A3B", "mistralai--Mixtral-8x7B-v0.1", "deepseek-ai--DeepSeek-V3",
       "openai--gpt-oss-20b"]


def vllm_default_ladder(top: int) -> list[int]:
    """vLLM's default ladder up to ``top``, written as a membership test (not as ranges)."""
    return [s for s in range(1, top + 1)
            if s in (1, 2, 4) or (s < 256 and s % 8 == 0) or (s >= 256 and s % 16 == 0)]
