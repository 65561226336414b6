class PlatformKunlunxin:
    def device_name(self, device_index=None):
        if device_index is None:
            return "kunlunxin"
        return "kunlunxin:" + str(device_index)
