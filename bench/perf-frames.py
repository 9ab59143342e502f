#!/usr/bin/env python3
"""CPU per answer by frame, from a profile `bench/ask-cpu.sh` recorded (PERF_RECORD=FILE).

    bench/perf-frames.py FILE US_PER_ANSWER PATTERN...   each pattern's subtree
    bench/perf-frames.py FILE US_PER_ANSWER --self [N]   the N frames most often on top
    bench/perf-frames.py FILE US_PER_ANSWER --crates     the same, summed by crate (SQLite,
                                                         mimalloc, libc's mem*, and plain C
                                                         names, the kernel's and libc's, apart)

A pattern's figure is the share of samples whose stack holds a frame containing it, times the
server's CPU per answer that ask-cpu.sh printed: the µs per answer BENCHMARKS.md quotes.
`--self` does the same for the innermost frame of each sample (time spent in the frame itself).
"""
import collections
import re
import subprocess
import sys


def stacks(path):
    """Each sample's frames, innermost first, from `perf script`."""
    text = subprocess.run(
        ["perf", "script", "-i", path, "-F", "ip,sym"],
        capture_output=True, text=True, check=True,
    ).stdout
    for block in text.split("\n\n"):
        frames = [line.strip().split(None, 1) for line in block.splitlines() if line.strip()]
        frames = [re.sub(r"\+0x[0-9a-f]+$", "", f[1]) for f in frames if len(f) == 2]
        if frames:
            yield frames


def crate_of(frame):
    """The part of the program a frame belongs to: a Rust path's first segment, or a C group."""
    name = frame.lstrip("<&")
    if re.match(r"(sqlite3|pcache|btree|vdbe|walIndex|pager|unixLock|posix_lock)", name, re.I):
        return "SQLite"
    if name.startswith(("mi_", "_mi_")):
        return "mimalloc"
    if any(part in name for part in ("memcpy", "memmove", "memset", "memcmp")):
        return "libc mem*"
    rust = re.match(r"([a-z_0-9]+)::", name)
    if rust:
        return rust.group(1)
    if re.match(r"[a-z_0-9.]+$", name):
        return "kernel and libc"
    return "other"


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    path, per_answer, wanted = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    samples = list(stacks(path))
    if not samples:
        sys.exit(f"{path}: no samples")
    if wanted[0] == "--self":
        top = collections.Counter(frames[0] for frames in samples)
        count = int(wanted[1]) if len(wanted) > 1 else 30
        for frame, hits in top.most_common(count):
            print(f"{hits / len(samples) * per_answer:7.2f} µs  {frame}")
        return
    if wanted[0] == "--crates":
        crates = collections.Counter(crate_of(frames[0]) for frames in samples)
        for crate, hits in crates.most_common():
            print(f"{hits / len(samples) * per_answer:7.2f} µs  {crate}")
        return
    for pattern in wanted:
        hits = sum(1 for frames in samples if any(pattern in f for f in frames))
        print(f"{hits / len(samples) * per_answer:7.2f} µs  {pattern}")


if __name__ == "__main__":
    main()
