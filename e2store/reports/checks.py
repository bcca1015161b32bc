"""A store checked, and repaired when asked: what `e2store verify` reports.

Verification itself is `e2store.store.verify`; here the order of the steps: a manifest
that cannot be read is rebuilt from the records before anything else, damaged files are
rewritten, and the store is verified again, each step said on `log`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from e2store.errors import StoreError
from e2store.store.layout import MANIFEST


def verify_and_repair(store: str | Path, instances: Iterable[str] | None = None,
                      hammings: Iterable[int] | None = None, repair: bool = False,
                      log: Callable[[str], None] | None = None):
    """The `VerifyReport` of the store (the chosen instances and hammings); with `repair`,
    an unreadable manifest rebuilt from the records and every damaged file rewritten
    first, the report then that of the store verified again.  `log` is told each damaged
    file (`DAMAGED ...`) and each repair (`repaired: ...`, `could not ...`)."""
    from e2store.store.verify import repair_store, verify_store
    from e2store.store.write import write_manifest

    root = Path(store)
    say = log or (lambda line: None)
    ids = list(instances) if instances is not None else None
    hs = list(hammings) if hammings is not None else None
    try:
        report = verify_store(root, ids, hs)
    except StoreError:
        if not (repair and root.is_dir() and (root / "instances").is_dir()):
            raise
        write_manifest(root)  # an unreadable manifest: rebuilt from the records
        say(f"repaired: rewrote {root / MANIFEST} from the records")
        report = verify_store(root, ids, hs)
    if repair and not report.ok:
        for d in report.damaged:
            say(f"DAMAGED {d.line()}")
        for line in repair_store(root, report):
            say(line if line.startswith("could not") else f"repaired: {line}")
        report = verify_store(root, ids, hs)
    return report


def repair_commands(store: str | Path, report) -> list[str]:
    """The commands that rewrite the damaged partitions of a `VerifyReport`, each once."""
    return sorted({r for d in report.damaged if (r := d.repair(Path(store)))})
