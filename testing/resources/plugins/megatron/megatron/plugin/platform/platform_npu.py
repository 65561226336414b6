class PlatformNpu:
    def device_name(self, device_index=None):
        if device_index is None:
            return "npu"
        return "npu:" + str(device_index)
