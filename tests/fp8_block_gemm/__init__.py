"""Public tests for fp8_block_gemm."""
