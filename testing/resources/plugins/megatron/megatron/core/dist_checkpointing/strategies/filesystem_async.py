from megatron.plugin.decorators import overridable


class FileSystemWriterAsync:
    @overridable
    def prepare_write_data(self, plan, planner):
        pass

    @staticmethod
    @overridable
    def preload_tensors(write_buckets, non_blocking=True):
        return write_buckets
