# Trimmed for flagbot's tests: a stand-in for flag_gems.runtime (device detection needs a GPU).
torch_device_fn = None
