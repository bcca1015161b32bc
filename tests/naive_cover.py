"""The slow twin of `e2store.cover`'s kernel: exact cover with colours by plain recursion
(no links, no minimum-remaining-values rule): the first primary item not yet covered, each
option holding it whose primary items are all free and whose coloured secondary items
agree with the colours already set.  Every solution, as the set of its options."""

from __future__ import annotations


def naive_xcc(n_primary: int, options: list[list[tuple[int, int]]]) -> list[frozenset[int]]:
    """The solutions of the problem whose options are lists of (item, colour) (items from
    1; primary 1..n_primary; colour 0 none): each a frozenset of option numbers."""
    by_item: dict[int, list[int]] = {}
    for o, opt in enumerate(options):
        for item, _ in opt:
            by_item.setdefault(item, []).append(o)
    out: list[frozenset[int]] = []
    covered: set[int] = set()
    colour: dict[int, int] = {}  # a secondary item's colour, once an option sets it
    taken: set[int] = set()  # secondary items covered without a colour
    chosen: list[int] = []

    def fits(o: int) -> bool:
        for item, c in options[o]:
            if item <= n_primary:
                if item in covered:
                    return False
            elif item in taken or (c == 0 and item in colour) or (
                    c and colour.get(item, c) != c):
                return False
        return True

    def walk() -> None:
        free = next((i for i in range(1, n_primary + 1) if i not in covered), None)
        if free is None:
            out.append(frozenset(chosen))
            return
        for o in by_item.get(free, []):
            if not fits(o):
                continue
            added_cov, added_col, added_taken = [], [], []
            for item, c in options[o]:
                if item <= n_primary:
                    covered.add(item)
                    added_cov.append(item)
                elif c == 0:
                    taken.add(item)
                    added_taken.append(item)
                elif item not in colour:
                    colour[item] = c
                    added_col.append(item)
            chosen.append(o)
            walk()
            chosen.pop()
            for item in added_cov:
                covered.discard(item)
            for item in added_col:
                del colour[item]
            for item in added_taken:
                taken.discard(item)

    walk()
    return out
