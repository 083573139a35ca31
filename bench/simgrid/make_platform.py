#!/usr/bin/env python3
"""Platforms for the simulated-scale study (docs/scaling.md).

  make_platform.py cluster --nodes N [--bw GBps] [--lat us] OUT.xml HOSTFILE
      SimGrid cluster of N hosts node-0 .. node-(N-1) on a two-level fat tree (one leaf switch
      when N <= 16 ... see fat_tree()), every link `bw` GB/s with `lat` us of latency; the
      hostfile lists one host per MPI rank. starpu_smpirun adds each rank's node (the per-host
      platform StarPU's bus calibration wrote) beside it.
"""
import argparse
import math
import sys


def fat_tree(nodes):
    """SimGrid's FAT_TREE topo_parameters for `nodes` hosts: one switch up to 16 hosts, else
    leaves of k hosts each with k uplinks to k spines (full bisection)."""
    if nodes <= 16:
        return f"1;{nodes};1;1"
    k = int(math.ceil(math.sqrt(nodes)))
    while nodes % k:
        k += 1
    leaves = nodes // k
    return f"2;{k},{leaves};1,{k};1,1"


def cluster(args):
    with open(args.out, "w") as f:
        f.write("<?xml version='1.0'?>\n")
        f.write('<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n')
        f.write('<platform version="4.1">\n')
        f.write(f'<cluster id="fabric" prefix="node-" suffix="" radical="0-{args.nodes - 1}" speed="1Gf" '
                f'bw="{args.bw}GBps" lat="{args.lat}us" topology="FAT_TREE" topo_parameters="{fat_tree(args.nodes)}" '
                f'loopback_bw="1000GBps" loopback_lat="0us"/>\n')
        f.write("</platform>\n")
    with open(args.hostfile, "w") as f:
        for i in range(args.nodes):
            f.write(f"node-{i}\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cluster")
    c.add_argument("--nodes", type=int, required=True)
    c.add_argument("--bw", type=float, default=25.0, help="GB/s per link (25: 200 Gb/s)")
    c.add_argument("--lat", type=float, default=1.0, help="us per link")
    c.add_argument("out")
    c.add_argument("hostfile")
    args = p.parse_args()
    cluster(args)


if __name__ == "__main__":
    sys.exit(main())
