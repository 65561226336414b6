def _per_op_order(op_backends):
    # class names op_backends may use instead of op names (sglang_fl/__init__.py)
    _CLASS_TO_OP = {
        "SiluAndMul": "silu_and_mul",
        "RMSNorm": "rms_norm",
        "RotaryEmbedding": "rotary_embedding",
        "TopK": "topk",
    }
    return {_CLASS_TO_OP.get(k, k): v for k, v in op_backends.items()}
