def _set_cuda_rng_state(new_state, device=-1):
    pass
