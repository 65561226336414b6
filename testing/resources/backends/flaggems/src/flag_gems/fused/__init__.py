from flag_gems.fused.gelu_and_mul import gelu_and_mul
