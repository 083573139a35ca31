# calls_ab.txt (two processes each of "before" and "after") summarised: for each type and order,
# PyTorch's synchronised call over Tessera's (the range over the processes) for cholesky_ex and
# cholesky, and the smallest median host time of a cholesky_ex call (Tessera before, after;
# PyTorch's over all processes).
#   python3 summarize.py calls_ab.txt
import collections, re, sys

pattern = re.compile(r"(before|after)\s+(\S+)\s+n=\s*(\d+)\s+cholesky_ex sync us\s+[\d.]+ torch\s+[\d.]+ "
                     r"torch/tessera ([\d.]+) host us\s+([\d.]+) torch\s+([\d.]+) \| cholesky sync us\s+[\d.]+ "
                     r"torch\s+[\d.]+ torch/tessera ([\d.]+)")
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = pattern.match(line)
    if m:
        label, dtype, n = m.group(1), m.group(2), int(m.group(3))
        rows[(dtype, int(n), label)].append([float(m.group(k)) for k in (4, 7, 5, 6)])
orders = sorted({n for _, n, _ in rows})
span = lambda v, i: f"{min(x[i] for x in v):.2f}-{max(x[i] for x in v):.2f}"
print("type        order | cholesky_ex before  after     | cholesky before  after     | host us before after torch")
for dtype in ("float64", "float32", "complex128", "complex64"):
    for n in orders:
        b, a = rows[(dtype, n, "before")], rows[(dtype, n, "after")]
        if b and a:
            print(f"{dtype:10} {n:6} | {span(b, 0):>9}  {span(a, 0):>9}    | {span(b, 1):>9}  {span(a, 1):>9} |"
                  f" {min(x[2] for x in b):5.1f} {min(x[2] for x in a):5.1f} {min(x[3] for x in a + b):5.1f}")
