"""The client side: taking messages, acknowledging them one by one, the locks that say a message is
still ours.
"""
