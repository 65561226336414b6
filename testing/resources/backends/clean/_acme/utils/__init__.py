def next_block(n):
    return 1 << (n - 1).bit_length()
