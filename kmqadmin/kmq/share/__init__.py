"""The share-group backend (KIP-932) behind the same client API, and its delivery counts."""
