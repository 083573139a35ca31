#!/usr/bin/env python3
"""The ranges of rows in potrf_batched_columns_shape's table, from a bench_batched_columns log.

For each type, triangle, stack length and block width, the rows are taken in order and a range is
extended while one shape stays within TOLERANCE of the fastest at every row in it; the range takes
the shape with the smallest summed time over the fastest's.

    ranges.py columns.txt [tolerance]   (default 1.04)
"""
import re
import sys
from collections import defaultdict

line_re = re.compile(r"^([dszc]) (lower|upper) +(\d+) +(\d+) +(\d+) \|.*\|(( \(\d+,\d+,\d+,\d+\):[0-9.]+)+)$")


def main():
    tolerance = float(sys.argv[2]) if len(sys.argv) > 2 else 1.04
    cases = defaultdict(list)
    for line in open(sys.argv[1]):
        m = line_re.match(line.rstrip())
        if not m or "*" in line.split("|")[2]:
            continue
        times = {s: float(t) for s, t in re.findall(r"(\(\d+,\d+,\d+,\d+\)):([0-9.]+)", m.group(6))}
        key = (m.group(1), m.group(2), int(m.group(3)), int(m.group(5)))
        cases[key].append((int(m.group(4)), times))
    for key, rows in cases.items():
        rows.sort()
        ranges, i = [], 0
        while i < len(rows):
            j, pick = i, None
            while j < len(rows):
                span = rows[i:j + 1]
                fits = [s for s in span[0][1]
                        if all(s in t and t[s] <= tolerance * min(t.values()) for _, t in span)]
                if not fits:
                    break
                pick = min(fits, key=lambda s: sum(t[s] / min(t.values()) for _, t in span))
                j += 1
            ranges.append(f"<= {rows[j - 1][0]}: {pick}")
            i = j
        print(*key, "|", ", ".join(ranges))


main()
