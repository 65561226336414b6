def preload_tensors_kunlunxin(write_buckets, non_blocking=True):
    return write_buckets


def prepare_write_data(self, plan, planner):
    pass
