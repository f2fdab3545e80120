"""Glue to OpenDP, diffprivlib and dp_accounting, installed as ``shuffle_accounting.adapters``.

Each adapter module imports its library lazily and raises an actionable ``ImportError`` naming
the extra to install when the library is missing.
"""
