def reduce_loss_in_tracker():
    pass
