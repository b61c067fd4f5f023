"""Placeholder replaced below."""
def export_variant(variant, folder, target):
    raise NotImplementedError
