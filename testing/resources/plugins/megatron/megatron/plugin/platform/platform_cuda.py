class PlatformCuda:
    def device_name(self, device_index=None):
        if device_index is None:
            return "cuda"
        return "cuda:" + str(device_index)
