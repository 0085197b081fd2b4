"""The public game records as data: Parquet files of games and decisions (docs/reference/export.md).

Imports pyarrow (the ``data`` extra); only ``arena export`` imports this package.
"""
