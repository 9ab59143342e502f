#!/usr/bin/env python3
"""CPU per answer by frame, from a profile `bench/ask-cpu.sh` recorded (PERF_RECORD=FILE).

    bench/perf-frames.py FILE US_PER_ANSWER PATTERN...   each pattern's subtree
    bench/perf-frames.py FILE US_PER_ANSWER --self [N]   the N frames most often on top

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
    for pattern in wanted:
        hits = sum(1 for frames in samples if any(pattern in f for f in frames))
        print(f"{hits / len(samples) * per_answer:7.2f} µs  {pattern}")


if __name__ == "__main__":
    main()
