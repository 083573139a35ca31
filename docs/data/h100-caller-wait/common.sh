B=/tmp/b; mkdir -p $B
tar xJf .bundle/deps.tar.xz -C $B; tar xJf .bundle/b80.tar.xz -C $B
export STARPU_SILENT=1 STARPU_HOSTNAME=device
L=$B/lib80:$B/lib:/usr/local/cuda/lib64
log=$OUT/log; mkdir -p $log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log/gpu.txt
finish() { tar czf $OUT/logs.tgz -C $OUT log; }
trap finish EXIT
