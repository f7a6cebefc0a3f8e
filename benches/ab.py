#!/usr/bin/env python3
"""Alternating A/B timing of whole commands, for changes smaller than a VM's drift.

    benches/ab.py 30 old='/tmp/flakestat-old classify ...' new='target/release/flakestat classify ...'

Runs each command once in turn, N rounds (so both meet the same phases of a machine whose
speed drifts over minutes, which a run of all A then all B does not), output to /dev/null,
and prints per command the median and minimum of the wall time and of the CPU time (user +
system of the child), and the median wall time relative to the first command.
"""
import resource
import statistics
import subprocess
import sys
import time


def main() -> None:
    if len(sys.argv) < 3 or not sys.argv[1].isdigit():
        sys.exit(__doc__)
    rounds = int(sys.argv[1])
    commands = [arg.split("=", 1) for arg in sys.argv[2:]]
    if any(len(c) != 2 for c in commands):
        sys.exit("benches/ab.py: each command is NAME=COMMAND")
    wall = {name: [] for name, _ in commands}
    cpu = {name: [] for name, _ in commands}
    for _ in range(rounds):
        for name, command in commands:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            # The exit status is not checked: classify exits 1 when nothing matched.
            subprocess.run(command, shell=True, stdout=subprocess.DEVNULL)
            wall[name].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(
                after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            )
    first = statistics.median(wall[commands[0][0]])
    for name, _ in commands:
        w, c = wall[name], cpu[name]
        print(
            f"{name:12} wall median {statistics.median(w) * 1e3:7.1f} ms, min {min(w) * 1e3:7.1f}"
            f" | CPU median {statistics.median(c) * 1e3:7.1f} ms, min {min(c) * 1e3:7.1f}"
            f" | wall / first {statistics.median(w) / first:.3f}"
        )


if __name__ == "__main__":
    main()
