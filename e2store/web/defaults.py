"""The web explorer's defaults, declared once and light to import (no fastapi, duckdb or
pyarrow: `e2store serve --help` reads them, and the web extra may not be installed)."""

from __future__ import annotations

SQL_SECONDS = 10.0  # default time limit of a query in the SQL box
