"""Malformed piece files of every format, made by random edits of valid ones: reading one
through the command line either succeeds or fails with exit 2 and one line naming the file,
never a traceback (issue 23)."""

from __future__ import annotations

import random
from pathlib import Path

from click.testing import CliRunner

from e2store.cli import main
from e2store.instance.e2sfile import format_e2store
from e2store.instance.generate import generate_instance

JUNK = ["", "x", "-1", "-0", "+5", "5.0", "1e3", "0x1F", "32768", "99999999999999999999",
        "9" * 5000, "\u0663", "\uff13", "\x00", "\x1b[31m", "½", "nan", "#", ":", "size:",
        "pieces: 3", "solution:", "e2store-instance 2", "\u2028", "\x0c", "é"]


def mutate(text: str, rng: random.Random) -> bytes:
    """One to three random edits of `text`: lines deleted, doubled, swapped or replaced by
    junk, tokens replaced or appended, the file cut short, or a byte flipped."""
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(8)
        i = rng.randrange(len(lines))
        if op == 0 and len(lines) > 1:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[i])
        elif op == 2:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 3:
            lines.insert(i, rng.choice(JUNK))
        elif op in (4, 5):
            tokens = lines[i].split(" ")
            k = rng.randrange(len(tokens))
            if op == 4:
                tokens[k] = rng.choice(JUNK)
            else:
                tokens.insert(k, rng.choice(JUNK))
            lines[i] = " ".join(tokens)
        elif op == 6:
            return "\n".join(lines)[:rng.randrange(len(text))].encode()
        else:
            data = bytearray("\n".join(lines).encode())
            k = rng.randrange(len(data))
            data[k] ^= 1 << rng.randrange(8)
            return bytes(data)
    return "\n".join(lines).encode()


def sources(shared: Path | None) -> list[tuple[str, str]]:
    """(suffix, text) of valid files: a generated e2store file, and one file of each other
    format from ../shared when present."""
    out = [(".e2s", format_e2store(generate_instance(4, 4, 2, 3, seed=1)))]
    if shared is not None:
        for rel, suffix in (("benchmark/pieces_4x4.txt", ".txt"),
                            ("brendan_set1/pieces_04x04.txt", ".txt"),
                            ("clue1_jwortmann.txt", ".txt"), ("e2_gallicchio.puz", ".puz")):
            if (shared / rel).exists():
                out.append((suffix, (shared / rel).read_text()))
    return out


def test_a_thousand_malformed_files_fail_in_one_line(tmp_path):
    shared = Path(__file__).resolve().parents[2] / "shared" / "instances"
    srcs = sources(shared if shared.is_dir() else None)
    rng = random.Random(23)
    runner = CliRunner()
    failed = 0
    n = 1000
    for k in range(n):
        suffix, text = srcs[k % len(srcs)]
        path = tmp_path / f"fuzz{k:04d}{suffix}"
        path.write_bytes(mutate(text, rng))
        r = runner.invoke(main, ["validate", str(path)])
        where = f"{path.name}: {r.output[-400:]!r}"
        assert "Traceback" not in r.output, where
        assert r.exception is None or isinstance(r.exception, SystemExit), (where, r.exception)
        if r.exit_code not in (0, 1):
            failed += 1
            assert r.exit_code == 2, where
            errors = [x for x in r.stderr.splitlines() if x.strip()]
            assert len(errors) == 1 and str(path) in errors[0], where
        path.unlink()
    assert failed > n // 2  # most edits break the file
