"""The audit: the pure verifier and bundle format (``verify``) and its Redis export (``store``)."""
