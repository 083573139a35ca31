#!/bin/bash
# One device call: routes_ab.py with the new package (each route against PyTorch).
set -u
L=$OUT/logs; mkdir -p $L
tar xJf .bundle-p/sites.tar.xz -C /tmp after || exit 1
(cd /tmp/after/tessera_cholesky.libs && cp libblas.so.3 libblas-5b50307c.so.3 && cp liblapack.so.3 liblapack-379e77b4.so.3)
export STARPU_SILENT=1 PYTHONPATH=/tmp/after LD_LIBRARY_PATH=/tmp/after/tessera_cholesky.libs STARPU_PERF_MODEL_DIR=$(mktemp -d)
timeout 300 python3 docs/data/h100-python-replayed-launches/routes_ab.py > $L/routes_ab.txt 2>&1; echo "rc=$?" >> $L/routes_ab.txt
cat $L/routes_ab.txt
