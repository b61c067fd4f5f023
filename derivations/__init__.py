"""The chapter on position representations, derived claim by claim.

One module per section of the chapter; importing a module registers its
claims with :func:`symproof.claim`.  ``symproof verify`` imports them all.
"""
