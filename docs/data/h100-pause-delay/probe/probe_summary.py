import re, sys, statistics
from collections import defaultdict
rows = defaultdict(list)
for line in open(sys.argv[1]):
    if not line.startswith("probe "): continue
    parts = line.split()
    n = int(parts[1].split("=")[1])
    vals = dict(zip(parts[2::2], map(float, parts[3::2])))
    rows[n].append(vals)
for n, calls in rows.items():
    calls = calls[2:]                 # the warm-up round: one untraced and one traced call
    untraced = calls[0::2]
    keys = list(untraced[0].keys())
    print(f"n={n} untraced median us: " + ", ".join(f"{k} {statistics.median(c[k] for c in untraced):.0f}" for k in keys))
    print(f"n={n} untraced p90 us:    " + ", ".join(f"{k} {sorted(c[k] for c in untraced)[len(untraced)*9//10]:.0f}" for k in keys))
