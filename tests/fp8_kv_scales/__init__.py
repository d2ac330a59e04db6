"""Public tests for the fp8_kv_scales kata."""
