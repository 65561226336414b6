# op name -> (class, vLLM CustomOp name); only the keys matter to the checker
OOT_OPS = {
    "silu_and_mul": (None, "SiluAndMul"),
    "rms_norm": (None, "RMSNorm"),
    "rotary_embedding": (None, "RotaryEmbedding"),
    "fused_moe": (None, "FusedMoE"),
}
