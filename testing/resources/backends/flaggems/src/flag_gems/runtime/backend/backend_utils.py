# VendorDescriptor lives here in FlagGems; not needed by the checker
